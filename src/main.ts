// `npm start`: migrate, then run the API and one worker as child processes. Signals are passed
// on to both, and if either exits the other is stopped too, so a supervisor sees one service.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfigOrExit } from './config.js';
import { createLogger } from './logger.js';
import { migrate } from './migrate.js';

const config = loadConfigOrExit();
const log = createLogger(config.logLevel, { proc: 'main', pid: process.pid });

const applied = await migrate(config);
log.info('migrations applied', { applied });

const entry = (path: string) => fileURLToPath(new URL(path, import.meta.url));
const children: ChildProcess[] = [
  spawn(process.execPath, [entry('./server.js')], { stdio: 'inherit' }),
  spawn(process.execPath, [entry('../workers/main.js')], { stdio: 'inherit' }),
];

let exiting = false;
const stopAll = (signal: NodeJS.Signals) => {
  for (const child of children) if (child.exitCode === null) child.kill(signal);
};
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    exiting = true;
    stopAll(signal);
  });
}
let remaining = children.length;
for (const child of children) {
  child.on('exit', (code) => {
    if (!exiting) {
      exiting = true;
      log.error('a child process exited; stopping the other', { code });
      stopAll('SIGTERM');
      process.exitCode = code || 1;
    }
    if (--remaining === 0) process.exit();
  });
}
