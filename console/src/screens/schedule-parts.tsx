// What the schedule screens share (screens/schedules.tsx, schedule.tsx, schedule-form.tsx): a
// schedule's state as a badge, a record of its history in words, and the templates' names.
import { href } from '../router.js';
import { KIND_WORDS, SKIP_WORDS } from '../schedule-words.js';
import { Time, useCan, useLoad } from '../ui.js';
import type { ScheduleFire, ScheduleState } from '../vocabulary.js';

export const schedulePath = (id: string) => `/schedules/${encodeURIComponent(id)}`;

/** Active or paused, as a badge with its word. */
export function ScheduleStateBadge({ state }: { state: ScheduleState }) {
  return (
    <span class={`badge ${state === 'active' ? 'status-completed' : 'status-cancelled'}`}>
      {state}
    </span>
  );
}

/** What came of a record, in words: "Run created, on schedule", "Skipped 3 times: …". */
export function fireHead(fire: ScheduleFire): string {
  switch (fire.outcome) {
    case 'fired':
      return `Run created, ${KIND_WORDS[fire.kind]}`;
    case 'buffered':
      return 'Held until the previous run ends';
    case 'skipped': {
      const times = fire.missed ? `Skipped ${fire.missed} times` : 'Skipped';
      const kind = fire.kind === 'cadence' ? '' : ` (${KIND_WORDS[fire.kind]})`;
      return `${times}${kind}${fire.reason ? `: ${SKIP_WORDS[fire.reason]}` : ''}`;
    }
  }
}

/** The scheduled time a record is for (a record for several: the first to the last). */
function FireTimes({ fire }: { fire: ScheduleFire }) {
  return (
    <>
      <Time value={fire.scheduledFor} />
      {fire.until && (
        <>
          {' '}
          to <Time value={fire.until} />
        </>
      )}
    </>
  );
}

function RunLink({ id }: { id: string }) {
  return (
    <a href={href(`/runs/${encodeURIComponent(id)}`)}>
      <code>{id}</code>
    </a>
  );
}

/** A record in short, for a list's row: its outcome and time. */
export function FireSummary({ fire }: { fire: ScheduleFire }) {
  return (
    <span class="fire-summary">
      {fire.outcome === 'fired' ? 'ran' : fire.outcome === 'skipped' ? 'skipped' : 'held'}{' '}
      <FireTimes fire={fire} />
      {fire.outcome === 'skipped' && fire.reason && (
        <span class="muted small"> ({SKIP_WORDS[fire.reason]})</span>
      )}
    </span>
  );
}

/** A record in full: what came of it, for which time, its run, and when it was recorded. */
export function FireRecord({ fire }: { fire: ScheduleFire }) {
  return (
    <>
      <p class="event-head">
        <strong>{fireHead(fire)}</strong>{' '}
        <code class="muted">
          {fire.kind} · {fire.outcome}
          {fire.reason ? ` · ${fire.reason}` : ''}
        </code>
      </p>
      <p class="event-meta">
        for <FireTimes fire={fire} />
        {fire.runId && (
          <>
            {' '}
            · run <RunLink id={fire.runId} />
          </>
        )}{' '}
        · recorded <Time value={fire.at} />
      </p>
    </>
  );
}

/**
 * The organization's templates by id, for names (a key without templates:read sees ids): the
 * list when it could be read, and a template's name or else its id.
 */
export function useTemplateNames(): {
  list: Array<{ id: string; name: string }> | undefined;
  of(id: string): string;
} {
  const canTemplates = useCan('templates:read');
  const templates = useLoad(
    (api) =>
      canTemplates
        ? api.page('getWorkflowTemplates', { limit: 100 }).then((p) => p.items)
        : Promise.resolve(undefined),
    [canTemplates],
  );
  const list = templates.data?.map((t) => ({ id: t.id, name: t.name }));
  return {
    list,
    of: (id) => list?.find((t) => t.id === id)?.name ?? id,
  };
}
