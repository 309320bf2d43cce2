// What every child process of the bench (load generators, probes, baselines) shares: its
// options arrive as JSON in argv[2], its result leaves as one "RESULT {json}" line on stdout,
// and it exits when the orchestrator goes away (its stdin pipe closes), so no child outlives
// a bench that was killed.
import { createInterface } from 'node:readline';

export const RESULT_MARK = 'RESULT ';

export function childOptions<T>(): T {
  const raw = process.argv[2];
  if (!raw) throw new Error('missing options (JSON in argv[2])');
  return JSON.parse(raw) as T;
}

export function emitResult(result: unknown): void {
  process.stdout.write(RESULT_MARK + JSON.stringify(result) + '\n');
}

/** Ends this process when the parent's end of stdin closes. */
export function exitWithParent(): void {
  if (process.stdin.isTTY) return;
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}

/** Runs a child's main function: prints a failure on stderr and exits non-zero. */
export function runChild(main: () => Promise<void>): void {
  exitWithParent();
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}

/**
 * Serves a long-lived child's requests (RequestChild in processes.ts): one JSON request per
 * line of stdin, answered in turn with a RESULT line (`{ error }` when it failed); the process
 * exits once stdin closes and the last answer is out.
 */
export function serveRequests<T>(handle: (options: T) => Promise<unknown>): void {
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    if (line.trim() === '') return;
    queue = queue.then(async () => {
      try {
        emitResult(await handle(JSON.parse(line) as T));
      } catch (err) {
        emitResult({ error: (err as Error)?.stack ?? String(err) });
      }
    });
  });
  lines.on('close', () => void queue.then(() => process.exit(0)));
}
