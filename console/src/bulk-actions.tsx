// What the bulk actions' screens share (screens/bulk.tsx, screens/bulk-migration.tsx): a
// filter as a bulk action's body takes it, the words for what an action did and why it skipped
// runs, and following an action's progress until it completes.
import { useEffect, useState } from 'preact/hooks';
import type { BulkAction, BulkCancelWorkflowRunsRequest } from 'workflow-run-client';
import { isRefusal } from './api.js';
import type { RunFilterValues } from './run-filters.js';
import { useConsole } from './ui.js';
import type { BulkActionKind, BulkMigration, ErrorCode } from './vocabulary.js';

const NUMBER = new Intl.NumberFormat();
export const count = (n: number) => NUMBER.format(n);

export type BulkFilter = NonNullable<BulkCancelWorkflowRunsRequest['filter']>;

/** A bulk action's body's filter: the list's parameters, `overdue` as a boolean. */
export function bulkFilter(filter: RunFilterValues): BulkFilter {
  const body: BulkFilter = {};
  if (filter.statuses.length) body.status = filter.statuses.join(',');
  if (filter.templateId) body.template_id = filter.templateId;
  if (filter.templateId && filter.templateVersion)
    body.template_version = Number(filter.templateVersion);
  if (filter.assignee) body.assignee = filter.assignee;
  if (filter.overdue) body.overdue = filter.overdue === 'true';
  if (filter.createdAfter) body.created_after = filter.createdAfter;
  if (filter.createdBefore) body.created_before = filter.createdBefore;
  if (filter.updatedAfter) body.updated_after = filter.updatedAfter;
  if (filter.updatedBefore) body.updated_before = filter.updatedBefore;
  if (filter.labels.length) body.label = filter.labels;
  if (filter.scheduleId) body.schedule_id = filter.scheduleId;
  return body;
}

/** What the runs an action changed were made, in words. */
export const DONE: Record<BulkActionKind, string> = {
  cancel: 'cancelled',
  retry: 'retried',
  migrate: 'moved',
};

/** The runs an action changed (or, in a dry run, would change), in words: "3 moved". */
export const doneWords = (action: BulkAction) =>
  action.dryRun ? 'would move' : DONE[action.action];

/** The reasons runs are skipped, in words (the API's code beside them). */
export const SKIPPED: Partial<Record<ErrorCode, string>> = {
  run_not_cancellable: 'had already ended',
  run_not_retryable: 'were not failed',
  run_not_migratable: 'had ended (only pending or active runs move)',
  migration_same_version: 'already used the target version',
  migration_step_unmapped: 'were at a step that maps to no page of the target version',
  migration_incompatible_value: "held a value the target version's field refuses",
  completion_pending: 'had a step completion waiting for a worker',
};

/** Skipped runs by code, in words: "1 had ended (…) (run_not_migratable)". */
export function SkippedList({ skipped }: { skipped: Record<string, number> }) {
  const entries = Object.entries(skipped);
  if (entries.length === 0) return <>none</>;
  return (
    <ul class="plain">
      {entries.map(([code, n]) => (
        <li key={code}>
          {count(n)} {SKIPPED[code as ErrorCode] ?? 'were refused'} (<code>{code}</code>)
        </li>
      ))}
    </ul>
  );
}

/** A move's plan in words: its versions, its page map, whether it drops refused values. */
export function planWords(plan: BulkMigration): string {
  const pages = Object.entries(plan.pageMap ?? {}).map(([from, to]) =>
    to === null ? `${from} left behind` : `${from} becomes ${to}`,
  );
  return [
    `from version ${plan.fromVersion} to version ${plan.toVersion}`,
    pages.length ? `pages: ${pages.join(', ')}` : 'pages by name',
    plan.dropIncompatible ? 'incompatible values dropped' : '',
  ]
    .filter(Boolean)
    .join('; ');
}

/** Actions started from this page, shown at once while their first progress is read. */
export const started = new Map<string, BulkAction>();

/** Reads a bulk action about every 500 ms until it has completed. */
export function useBulkAction(id: string): { action?: BulkAction; error?: unknown } {
  const { api } = useConsole();
  const [state, setState] = useState<{ action?: BulkAction; error?: unknown }>(() => ({
    action: started.get(id),
  }));
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const action = await api.getBulkAction({ id });
        if (stopped) return;
        setState({ action });
        if (action.status !== 'completed') timer = setTimeout(() => void poll(), 500);
        else started.delete(id);
      } catch (error) {
        if (stopped) return;
        setState((s) => ({ ...s, error }));
        // A refusal (not found, no scope) is final; a lost connection or a 5xx is tried again.
        if (!isRefusal(error)) timer = setTimeout(() => void poll(), 2000);
      }
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id, api]);
  return state;
}

/** A bulk action's title: "Bulk cancel", "Bulk move to version 3", "Dry run: move to version 3". */
export function titleOf(action: BulkAction): string {
  if (!action.migration) return `Bulk ${action.action}`;
  const to = `move to version ${action.migration.toVersion}`;
  return action.dryRun ? `Dry run: ${to}` : `Bulk ${to}`;
}
