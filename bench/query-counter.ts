// Loaded into a service process by the rules phase (node --import): counts the statements the
// process sends to MariaDB, by shape, through mysql2's own diagnostics channel (no patching).
// On SIGUSR2 it writes what it has counted so far to the file named by BENCH_QUERY_COUNTS
// (written whole, then renamed into place). A shape is the statement with its literals and
// lists of them left out, so that the same query for two templates is one shape.
//
// The counts are the process's own: other users of a shared MariaDB (tests, other benches)
// do not enter them, as they enter the server's Com_select.
import { tracingChannel } from 'node:diagnostics_channel';
import { renameSync, writeFileSync } from 'node:fs';

/** What the file holds: statements sent so far, and those sent by shape. */
export interface QueryCounts {
  statements: number;
  selects: number;
  shapes: Record<string, number>;
}

const SHAPE_LENGTH = 160;

/** The statement without its literals: strings and numbers become ?, lists of them ?…. */
export function queryShape(sql: string): string {
  return sql
    .slice(0, 4000)
    .replace(/'(?:[^'\\]|\\.)*'/g, '?')
    .replace(/\b\d+(?:\.\d+)?\b/g, '?')
    .replace(/\?(?:\s*,\s*\?)+/g, '?…')
    .replace(/\(\?…?\)(?:\s*,\s*\(\?…?\))+/g, '(?…)…')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, SHAPE_LENGTH);
}

const counts: QueryCounts = { statements: 0, selects: 0, shapes: {} };

const target = process.env.BENCH_QUERY_COUNTS;
if (target) {
  tracingChannel<string, { query?: unknown }>('mysql2:query').subscribe({
    start(context) {
      const sql = typeof context.query === 'string' ? context.query : '';
      counts.statements++;
      const shape = queryShape(sql);
      counts.shapes[shape] = (counts.shapes[shape] ?? 0) + 1;
      if (/^select\b/i.test(shape)) counts.selects++;
    },
    end() {},
    asyncStart() {},
    asyncEnd() {},
    error() {},
  });
  process.on('SIGUSR2', () => {
    writeFileSync(`${target}.tmp`, JSON.stringify(counts));
    renameSync(`${target}.tmp`, target);
  });
}
