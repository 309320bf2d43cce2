// Runs written straight to MySQL for the bench (seeding, backlogs, the naive baseline): the
// service's own statements, rows and events in one transaction, without the API's bounded
// write (see db.ts writeTransaction), which measurements of the write itself must not pay.
import type { Db } from '../src/db.js';
import { eventRowsOf, insertEventsStatements, insertRunsStatements } from '../src/runs/run-sql.js';
import type { RunRecord } from '../src/runs/run-record.js';

export async function insertRuns(db: Db, runs: readonly RunRecord[]): Promise<void> {
  await db.transaction(async (trx) => {
    for (const sql of insertRunsStatements(runs)) await trx.raw(sql);
    for (const sql of insertEventsStatements(eventRowsOf(runs))) await trx.raw(sql);
  });
}
