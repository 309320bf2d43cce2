// The columns of workflow_runs, in one table: each column's field of the run record, how its
// value is written and read, and who writes it. The row type, the mapping both ways, the
// INSERT's columns and the columns each kind of change rewrites all derive from it, so a new
// column is one entry here (besides its migration and the record's field), and a column cannot
// be left out of what a change writes by forgetting a second list.
import {
  RunStateError,
  storedDocumentJson,
  type RunDocument,
  type RunRecord,
  type RunTemplate,
} from './run-record.js';

/**
 * Who writes a column after the INSERT:
 *   - 'identity': nobody (what the run is, and when it was made);
 *   - 'request': the API, when it records a change for a worker (requested_seq);
 *   - 'change': every writer of a change (a worker applying one, a cancel, a retry, an overdue
 *     step), as the state machine's record says;
 *   - 'version': the changes made at once, of which moving the run to another version of its
 *     template changes them (the others write them as read). A worker's change never does: one
 *     that read the run before it moved is refused by its guard.
 */
export type ColumnRole = 'identity' | 'request' | 'change' | 'version';

/** The row a column is read from: for messages, and for the pages of a run's template. */
interface RowContext {
  id: string;
  template_id: string;
  template_version: number;
  pagesOf?: TemplatePagesOf;
}

/** A column: the record's value as mysql2 writes it, and the value mysql2 reads as the record's. */
interface Column<F extends keyof RunRecord, V> {
  role: ColumnRole;
  field: F;
  write(run: RunRecord): V;
  read(value: V, row: RowContext): RunRecord[F];
}

const column = <F extends keyof RunRecord, V>(c: Column<F, V>) => c;
/** A column written and read as the record holds it. */
const same = <F extends keyof RunRecord>(role: ColumnRole, field: F) =>
  column<F, RunRecord[F]>({ role, field, write: (run) => run[field], read: (value) => value });
/** A BIGINT, which mysql2 reads as a string once it passes 2^53 (supportBigNumbers). */
const counter = <F extends 'requestedSeq' | 'appliedSeq' | 'eventSeq'>(
  role: ColumnRole,
  field: F,
) => column<F, number>({ role, field, write: (run) => run[field], read: (value) => Number(value) });

export const RUN_COLUMNS = {
  id: same('identity', 'id'),
  organization_id: same('identity', 'organizationId'),
  template_id: same('identity', 'templateId'),
  // The template version the run uses (the one it was made from, until it is moved to another):
  // its pages and due times.
  template_version: same('version', 'templateVersion'),
  workflow_name: same('version', 'workflowName'),
  status: same('change', 'status'),
  current_step_index: same('change', 'currentStepIndex'),
  current_step_name: same('change', 'currentStepName'),
  current_step_assignee: same('change', 'currentStepAssignee'),
  current_step_due_date: same('change', 'currentStepDueDate'),
  current_step_overdue: column({
    role: 'change',
    field: 'currentStepOverdue',
    write: (run) => (run.currentStepOverdue ? 1 : 0),
    read: (value: number) => Boolean(value),
  }),
  current_step_wake_at: same('change', 'currentStepWakeAt'),
  current_step_started_at: same('change', 'currentStepStartedAt'),
  // The document as stored: without its template's pages (storedDocumentJson), which reading
  // puts back.
  run_json: column({
    role: 'change',
    field: 'document',
    write: (run) => storedDocumentJson(run.document),
    read: readDocument,
  }),
  requested_seq: counter('request', 'requestedSeq'),
  applied_seq: counter('change', 'appliedSeq'),
  pending_since: same('change', 'pendingSince'),
  last_activity: same('change', 'lastActivity'),
  created_at: same('identity', 'createdAt'),
  event_seq: counter('change', 'eventSeq'),
} as const;

export type RunColumn = keyof typeof RUN_COLUMNS;

/** A workflow_runs row as mysql2 returns it (seq is the table's own, for list order). */
export type RunRow = { seq: number } & {
  [C in RunColumn]: ReturnType<(typeof RUN_COLUMNS)[C]['write']>;
};

/** A row as it is written: every column but seq. */
export type RunValues = Omit<RunRow, 'seq'>;

const ALL = Object.keys(RUN_COLUMNS) as RunColumn[];
const withRole = (...roles: ColumnRole[]) => ALL.filter((c) => roles.includes(RUN_COLUMNS[c].role));

/** Every column an INSERT writes, in one order. */
export const INSERT_COLUMNS: readonly RunColumn[] = ALL;

/** The columns a worker rewrites when it applies a change (requested_seq is the API's). */
export const CHANGED_COLUMNS: readonly RunColumn[] = withRole('change');

/**
 * The columns a change made at once rewrites (cancel also settles what was requested; a
 * migration moves the version).
 */
export const CHANGE_AT_ONCE_COLUMNS: readonly RunColumn[] = withRole(
  'change',
  'request',
  'version',
);

/** The row of a run, every column as mysql2 writes it. */
export function toRow(run: RunRecord): RunValues {
  const row: Partial<Record<RunColumn, unknown>> = {};
  for (const name of ALL) row[name] = RUN_COLUMNS[name].write(run);
  return row as RunValues;
}

/** A template version's pages and rules, or undefined when that version is not known. */
export type TemplatePagesOf = (
  templateId: string,
  version: number,
) => Pick<RunTemplate, 'pages' | 'rules'> | undefined;

/** The run document a row holds, with its template's pages; RunStateError when it is broken. */
function readDocument(json: string, row: RowContext): RunDocument {
  let document: RunDocument;
  try {
    document = JSON.parse(json) as RunDocument;
  } catch {
    throw new RunStateError(`run_json of run ${row.id} is not valid JSON`);
  }
  if (
    !document ||
    typeof document !== 'object' ||
    !Array.isArray(document.steps) ||
    !document.template ||
    typeof document.template !== 'object'
  ) {
    throw new RunStateError(`run_json of run ${row.id} is not a run document`);
  }
  // A document stored without its template's pages gets them from its template version; one
  // stored with them, as older rows are, keeps its own. Older documents do not name their
  // version: the row does.
  const { name } = document.template;
  const version = row.template_version;
  if (!Array.isArray(document.template.pages)) {
    const logic = row.pagesOf?.(row.template_id, version);
    if (!logic) {
      throw new RunStateError(
        `template ${row.template_id} version ${version} of run ${row.id} not found`,
      );
    }
    const { pages, rules } = logic;
    document.template = { id: row.template_id, name, version, pages, ...(rules ? { rules } : {}) };
  } else if (document.template.version !== version) {
    document.template = { id: row.template_id, name, version, pages: document.template.pages };
  }
  return document;
}

/** A run from its row; RunStateError when its document cannot be read. */
export function fromRow(row: RunValues, pagesOf?: TemplatePagesOf): RunRecord {
  const context: RowContext = {
    id: row.id,
    template_id: row.template_id,
    template_version: Number(row.template_version),
    pagesOf,
  };
  const run: Partial<Record<keyof RunRecord, unknown>> = {};
  for (const name of ALL) {
    const c = RUN_COLUMNS[name] as Column<keyof RunRecord, unknown>;
    run[c.field] = c.read(row[name], context);
  }
  run.events = []; // a run read from MySQL carries no events not yet stored
  return run as RunRecord;
}
