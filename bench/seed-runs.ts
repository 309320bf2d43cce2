// The list benchmark's data: an organization's runs written in bulk. One run is made and
// stored the way the service does it (created, then started), and the database copies it
// in chunks with INSERT ... SELECT over MariaDB's sequence tables, each copy with its own id.
// A few columns vary with the copy's number, so that the filters have minorities to find,
// spread evenly through the organization's runs (see SEEDED_FILTERS).
import { SYSTEM } from '../src/audit/actor.js';
import type { Db } from '../src/db.js';
import { newId } from '../src/lib/ids.js';
import { applyPending, newRun } from '../src/runs/run-state.js';
import { INSERT_COLUMNS } from '../src/runs/run-columns.js';
import { insertRuns } from './insert-runs.js';
import { INPUT_FIELDS, USER_ASSIGNMENTS, type Tenant } from './fixtures.js';

const CHUNK = 100_000;

// Every stored column but the id, which each copy gets anew.
const COLUMNS = INSERT_COLUMNS.filter((c) => c !== 'id');

/** Columns that vary with the copy's number s.seq: the minorities the list filters find. */
const VARIED: Partial<Record<(typeof COLUMNS)[number], string>> = {
  status:
    "CASE WHEN s.seq % 10 = 0 THEN 'completed' WHEN s.seq % 100 = 5 THEN 'failed' ELSE r.status END",
  current_step_assignee:
    "CASE WHEN s.seq % 100 = 7 THEN 'rare-assignee' ELSE r.current_step_assignee END",
  current_step_overdue: 'CASE WHEN s.seq % 50 = 3 THEN 1 ELSE 0 END',
};

/** Filtered list queries whose matches are 1 in 100 or rarer, and one of 1 in 10, seeded above. */
export const SEEDED_FILTERS = {
  status: 'status=completed',
  statuses: 'status=failed,completed',
  assignee: 'assignee=rare-assignee',
  overdue: 'overdue=true',
  label: 'label=cohort:rare',
} as const;

/** The label 1 run in 100 carries (SEEDED_FILTERS.label), as the service writes it. */
const SEEDED_LABEL = { key: 'cohort', value: 'rare', everyNth: 100, remainder: 11 } as const;

/** Gives the organization `count` started runs; returns the seconds it took. */
export async function seedRuns(db: Db, tenant: Tenant, count: number): Promise<number> {
  const started = Date.now();
  const now = new Date();
  const prototype = applyPending(
    newRun(newId(), tenant.orgId, tenant.template, INPUT_FIELDS, USER_ASSIGNMENTS, now, SYSTEM),
    now,
  );
  await insertRuns(db, [prototype]);
  // Copies get UUIDv7-shaped ids: this organization's random prefix, then a counter, so
  // they are unique and arrive in index order like the service's time-ordered ids.
  const idPrefix = newId().slice(0, 24);
  for (let done = 1; done < count; done += CHUNK) {
    const size = Math.min(CHUNK, count - done);
    await db.raw(
      `INSERT INTO workflow_runs (id, ${COLUMNS.join(', ')})
       SELECT CONCAT(?, LPAD(HEX(s.seq), 12, '0')), ${COLUMNS.map((c) => VARIED[c] ?? `r.${c}`).join(', ')}
       FROM workflow_runs r JOIN seq_${done}_to_${done + size - 1} s
       WHERE r.id = ?
       ORDER BY s.seq`,
      [idPrefix, prototype.id],
    );
  }
  // The seeded label: a run_labels row per labelled run, as a create with labels writes it.
  await db.raw(
    'INSERT INTO run_labels (organization_id, label_key, label_value, run_seq, run_id) ' +
      'SELECT organization_id, ?, ?, seq, id FROM workflow_runs ' +
      'WHERE organization_id = ? AND seq % ? = ?',
    [
      SEEDED_LABEL.key,
      SEEDED_LABEL.value,
      tenant.orgId,
      SEEDED_LABEL.everyNth,
      SEEDED_LABEL.remainder,
    ],
  );
  return (Date.now() - started) / 1000;
}
