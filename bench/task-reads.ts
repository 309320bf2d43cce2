// How many rows and index entries the inbox's first page reads in MySQL, counted by the
// session's Handler_read_* counters around one call of the service's own query (listTasks):
// a figure the machine's noise does not move, to show each filter's page is one bounded range
// scan at any organization size.
import type { Db } from '../src/db.js';
import { listTasks, type TaskOrder } from '../src/tasks/task-list.js';
import { parseQuery } from '../src/http/contract.js';
import { taskSchemas, type TaskListQuery } from '../src/tasks/task-schemas.js';
import { toTaskFilter } from '../src/tasks/task-service.js';
import { benchConfig } from './fixtures.js';
import { PREFIXES } from './settings.js';

/**
 * The route's query schema, made once: a schema with an $id is compiled (and its $id taken)
 * once per process, so a second object under the same $id would be refused.
 */
let listQuery: ReturnType<typeof taskSchemas>['listQuery'] | undefined;

/** The query string as the route reads it: its own schema, coerced and checked as a request's. */
function queryOf(query: string): TaskListQuery {
  const raw: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    const given = raw[name];
    raw[name] = given === undefined ? value : [given, value].flat();
  }
  listQuery ??= taskSchemas(benchConfig(PREFIXES.api)).listQuery;
  return parseQuery(listQuery, raw) as TaskListQuery;
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
