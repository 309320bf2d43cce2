// How many rows and index entries the inbox's first page reads in MySQL, counted by the
// session's Handler_read_* counters around one call of the service's own query (listTasks):
// a figure the machine's noise does not move, to show each filter's page is one bounded range
// scan at any organization size.
import type { Db } from '../src/db.js';
import { listTasks, type TaskOrder } from '../src/tasks/task-list.js';
import type { TaskListQuery } from '../src/tasks/task-schemas.js';
import { toTaskFilter } from '../src/tasks/task-service.js';

/** The query string as the route's schema reads it (repeated group and label, booleans). */
function queryOf(query: string): TaskListQuery {
  const input: Record<string, unknown> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    if (name === 'group' || name === 'label') {
      ((input[name] as string[] | undefined) ?? ((input[name] = []) as string[])).push(value);
    } else if (value === 'true' || value === 'false') input[name] = value === 'true';
    else input[name] = value;
  }
  return input as TaskListQuery;
}

/** Rows and index entries MySQL read for the first page (`limit` + 1 rows, as the API asks). */
export async function taskPageReads(
  db: Db,
  organizationId: string,
  query: string,
  limit: number,
): Promise<number> {
  const input = queryOf(query);
  const order: TaskOrder = input.order ?? 'due';
  return db.transaction(async (trx) => {
    const reads = async () => {
      const [rows] = (await trx.raw("SHOW SESSION STATUS LIKE 'Handler_read%'")) as [
        Array<{ Variable_name: string; Value: string }>,
      ];
      return rows.reduce((n, row) => n + Number(row.Value), 0);
    };
    const a = await reads();
    const b = await reads(); // what reading the counters itself reads
    await listTasks(trx, organizationId, toTaskFilter(input), order, limit + 1, null);
    const c = await reads();
    return c - b - (b - a);
  });
}
