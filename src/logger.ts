// JSON-lines logger. One line per event on stdout; fields are flat and never carry
// secrets: callers pass ids, never keys or Authorization headers.
import { writeSync } from 'node:fs';
import type { LogLevel } from './config.js';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
}

function errorFields(err: unknown): LogFields {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    // Database errors quote their whole statement, values included: keep the log line short.
    const message =
      err.message.length > 300
        ? `${err.message.slice(0, 150)} … ${err.message.slice(-150)}`
        : err.message;
    return { err: message, errName: err.name, ...(code ? { errCode: code } : {}) };
  }
  return { err: String(err) };
}

// Lines are written once per event-loop turn: one write for every request of a busy turn
// instead of one each. What is still buffered when the process exits is written synchronously.
let pending: string[] = [];
let scheduled = false;

function flush(): void {
  scheduled = false;
  if (pending.length === 0) return;
  const chunk = pending.join('');
  pending = [];
  process.stdout.write(chunk);
}

function buffered(line: string): void {
  pending.push(line);
  if (!scheduled) {
    scheduled = true;
    setImmediate(flush);
  }
}

process.on('exit', () => {
  if (pending.length > 0) writeSync(1, pending.join(''));
  pending = [];
});

export function createLogger(level: LogLevel, base: LogFields = {}): Logger {
  const threshold = ORDER[level];
  const write = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
    if (ORDER[lvl] < threshold) return;
    const extra: LogFields = { ...fields };
    if ('err' in extra) Object.assign(extra, errorFields(extra.err));
    const line = JSON.stringify({
      level: lvl,
      time: new Date().toISOString(),
      msg,
      ...base,
      ...extra,
    });
    buffered(line + '\n');
  };
  return {
    debug: (m, f) => write('debug', m, f),
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}
