// One schedule: its settings in words, its next five times, its actions — pause and resume
// (with a note), trigger a run now, backfill a range of past times, delete (each confirmed) —
// its history, newest first in pages, each record in words, and a link to the runs it created
// (the runs screen filtered by schedule_id). /schedules/new creates one and ?edit=1 edits it
// (screens/schedule-form.tsx); a save's answer is shown as it came, next times included.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { Page, ScheduleFire, WorkflowSchedule } from 'workflow-run-client';
import { fieldOf, messageOf } from '../api.js';
import { href, navigate, type Location } from '../router.js';
import {
  cadenceWords,
  cronHasWords,
  cronWords,
  durationWords,
  intervalWords,
  OVERLAP_WORDS,
  SKIP_WORDS,
} from '../schedule-words.js';
import {
  ActionButton,
  confirmAction,
  CopyButton,
  Empty,
  ErrorBanner,
  FieldMessage,
  isoOfLocalInput,
  Loading,
  LoadMore,
  localInputOf,
  ScreenHeader,
  Time,
  useCan,
  useConsole,
  useLoad,
  useNotice,
  type Loaded,
} from '../ui.js';
import { OVERLAP_POLICIES, type Overlap, type SkipReason } from '../vocabulary.js';
import { ScheduleForm } from './schedule-form.js';
import {
  fireHead,
  FireRecord,
  ScheduleStateBadge,
  schedulePath,
  useTemplateNames,
} from './schedule-parts.js';

const HISTORY_PAGE = 20;

/** A record, with the id LoadMore keeps pages apart by. */
type FireRow = ScheduleFire & { id: string };

const rowsOf = (page: Page<ScheduleFire>): Page<FireRow> => ({
  ...page,
  items: page.items.map((f) => ({ ...f, id: `${f.kind}\n${f.scheduledFor}\n${f.at}` })),
});

/** How often a schedule's screen reads it and its history's first page again. */
const FOLLOW_MS = 15_000;

/** The first page read again, with the pages shown below it kept (newest first). */
function merged(current: Page<FireRow> | undefined, fresh: Page<FireRow>): Page<FireRow> {
  if (!current || current.items.length <= HISTORY_PAGE) return fresh;
  const ids = new Set(fresh.items.map((f) => f.id));
  return {
    items: [...fresh.items, ...current.items.filter((f) => !ids.has(f.id))],
    nextCursor: current.nextCursor,
    nextUrl: current.nextUrl,
  };
}

/**
 * Follows the schedule while its screen shows it: its next times and last record, and its
 * history's newest records, read again every FOLLOW_MS (not while the tab is hidden). An answer
 * that an action's own answer came after is dropped.
 */
function useFollow(
  id: string,
  on: boolean,
  schedule: Loaded<WorkflowSchedule>,
  history: Loaded<Page<FireRow>>,
) {
  const { api } = useConsole();
  const now = useRef({ schedule, history });
  now.current = { schedule, history };
  useEffect(() => {
    if (!on) return;
    let stopped = false;
    const timer = setInterval(() => {
      if (document.hidden) return;
      const shown = now.current.schedule.data;
      Promise.all([
        api.getWorkflowSchedule({ id }),
        api.page('getWorkflowScheduleHistory', { id, limit: HISTORY_PAGE }).then(rowsOf),
      ]).then(
        ([fresh, page]) => {
          if (stopped || now.current.schedule.data !== shown) return;
          now.current.schedule.set(() => fresh);
          now.current.history.set((current) => merged(current, page));
        },
        () => undefined, // the next turn tries again; an action shows its own errors
      );
    }, FOLLOW_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [api, id, on]);
}

/** A save's answer, shown by the schedule's screen as it came (not read again). */
let justSaved: WorkflowSchedule | undefined;

export function ScheduleScreen({ id, location }: { id: string; location: Location }) {
  const canRead = useCan('schedules:read');
  if (id === 'new') {
    return (
      <section class="schedule-screen">
        <p class="crumbs">
          <a href={href('/schedules')}>Schedules</a> <span aria-hidden="true">›</span>
        </p>
        <ScreenHeader title="New schedule" />
        <ScheduleForm
          templateId={location.query.get('template_id') ?? ''}
          onSaved={(saved) => {
            justSaved = saved;
            navigate(schedulePath(saved.id), {}, true);
          }}
          onCancel={() => navigate('/schedules')}
        />
      </section>
    );
  }
  if (!canRead) {
    return (
      <section>
        <ScreenHeader title="Schedule" />
        <p class="banner info">
          This key does not hold the <code>schedules:read</code> scope, so it cannot read schedules.
          Sign in with a key that holds it to see this one.
        </p>
      </section>
    );
  }
  return <ScheduleView key={id} id={id} editing={location.query.get('edit') === '1'} />;
}

function ScheduleView({ id, editing }: { id: string; editing: boolean }) {
  const { api } = useConsole();
  const schedule = useLoad(
    (a) => {
      const saved = justSaved?.id === id ? justSaved : undefined;
      justSaved = undefined;
      return saved ? Promise.resolve(saved) : a.getWorkflowSchedule({ id });
    },
    [id],
  );
  const history = useLoad(
    (a) => a.page('getWorkflowScheduleHistory', { id, limit: HISTORY_PAGE }).then(rowsOf),
    [id],
  );
  const names = useTemplateNames();
  const [notice, say] = useNotice();
  const [actionError, setActionError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [backfilling, setBackfilling] = useState(false);
  const [deleted, setDeleted] = useState(false);
  useFollow(id, !editing && !deleted && schedule.data !== undefined, schedule, history);

  if (deleted) {
    return (
      <section class="schedule-screen">
        <ScreenHeader title="Schedule deleted" />
        <p class="banner info" role="status">
          The schedule is deleted: it creates no more runs. The runs it created are kept.{' '}
          <a href={href('/schedules')}>Back to the schedules</a>.
        </p>
      </section>
    );
  }
  if (schedule.error && !schedule.data) {
    return (
      <section class="schedule-screen">
        <ScreenHeader title="Schedule" />
        <ErrorBanner error={schedule.error} title="The schedule could not be read" />
        <p>
          <a href={href('/schedules')}>Back to the schedules</a>
        </p>
      </section>
    );
  }
  if (!schedule.data) return <Loading what="the schedule" />;
  const data = schedule.data;
  const templateName = names.of(data.templateId);
  const path = schedulePath(data.id);

  const crumbs = (
    <p class="crumbs">
      <a href={href('/schedules')}>Schedules</a> <span aria-hidden="true">›</span>
    </p>
  );
  if (editing) {
    return (
      <section class="schedule-screen">
        {crumbs}
        <ScreenHeader title={`Edit the schedule of ${templateName}`} />
        <ScheduleForm
          key={data.updatedAt}
          base={data}
          onSaved={(saved) => {
            schedule.set(() => saved);
            navigate(path, {}, true);
            say('Saved. Its next times are below.');
          }}
          onCancel={() => navigate(path)}
        />
      </section>
    );
  }

  /** Runs an action; its answer (the schedule now) replaces the one shown. */
  const act = async (call: () => Promise<WorkflowSchedule | void>, done: string) => {
    setBusy(true);
    setActionError(null);
    try {
      const answer = await call();
      if (answer) schedule.set(() => answer);
      else schedule.reload();
      say(done);
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
      history.reload();
    }
  };

  const pause = async () => {
    const answer = await confirmAction({
      title: 'Pause this schedule?',
      body: (
        <p>
          No run is created while it is paused; the times that pass meanwhile are recorded as
          skipped. Resuming starts it again from its next time.
        </p>
      ),
      confirm: 'Pause schedule',
      reason: { label: 'Note (optional, kept with the schedule)', maxLength: 1000 },
    });
    if (!answer) return;
    await act(
      () =>
        api.pauseWorkflowSchedule({
          id: data.id,
          ...(answer.reason ? { note: answer.reason } : {}),
        }),
      'The schedule is paused.',
    );
  };

  const resume = async () => {
    const answer = await confirmAction({
      title: 'Resume this schedule?',
      body: <p>Runs are created again at its next times.</p>,
      confirm: 'Resume schedule',
      reason: { label: 'Note (optional, kept with the schedule)', maxLength: 1000 },
    });
    if (!answer) return;
    await act(
      () =>
        api.resumeWorkflowSchedule({
          id: data.id,
          ...(answer.reason ? { note: answer.reason } : {}),
        }),
      'The schedule is active again.',
    );
  };

  const trigger = async () => {
    const answer = await confirmAction({
      title: 'Create a run now?',
      body: (
        <p>
          One run of <strong>{templateName}</strong> is created now, outside the cadence, with the
          schedule's inputs. While its previous run is still open, the overlap rule applies: “
          {OVERLAP_WORDS[data.overlap]}”.
        </p>
      ),
      confirm: 'Trigger now',
    });
    if (!answer) return;
    setBusy(true);
    setActionError(null);
    try {
      const fire = await api.triggerWorkflowSchedule({ id: data.id });
      say(fire.runId ? `Run ${fire.runId} created.` : `${fireHead(fire)}.`);
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
      schedule.reload();
      history.reload();
    }
  };

  const remove = async () => {
    const answer = await confirmAction({
      title: 'Delete this schedule?',
      body: (
        <p>
          It creates no more runs, and its history is deleted with it. The runs it created are kept.
          This cannot be undone.
        </p>
      ),
      confirm: 'Delete schedule',
      danger: true,
    });
    if (!answer) return;
    setBusy(true);
    setActionError(null);
    try {
      await api.deleteWorkflowSchedule({ id: data.id });
      setDeleted(true);
    } catch (e) {
      setActionError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="schedule-screen">
      {crumbs}
      <ScreenHeader title={`Schedule of ${templateName}`}>
        <ActionButton
          scope="schedules:write"
          disabled={busy}
          onClick={() => navigate(path, { edit: '1' })}
        >
          Edit
        </ActionButton>
        {data.state === 'active' ? (
          <ActionButton scope="schedules:write" disabled={busy} onClick={() => void pause()}>
            Pause
          </ActionButton>
        ) : (
          <ActionButton scope="schedules:write" disabled={busy} onClick={() => void resume()}>
            Resume
          </ActionButton>
        )}
        <ActionButton scope="schedules:write" disabled={busy} onClick={() => void trigger()}>
          Trigger now
        </ActionButton>
        <ActionButton
          scope="schedules:write"
          disabled={busy}
          aria-expanded={backfilling}
          aria-controls={backfilling ? 'schedule-backfill' : undefined}
          onClick={() => setBackfilling(true)}
        >
          Backfill…
        </ActionButton>
        <ActionButton
          scope="schedules:write"
          class="danger"
          disabled={busy}
          onClick={() => void remove()}
        >
          Delete
        </ActionButton>
      </ScreenHeader>
      <p class="schedule-cadence">
        <strong>{cadenceWords(data)}</strong> <ScheduleStateBadge state={data.state} />
      </p>
      {notice}
      <ErrorBanner error={actionError} title="The action was refused" />
      {schedule.error && (
        <ErrorBanner error={schedule.error} title="The schedule could not be read again" />
      )}
      {data.state === 'paused' && (
        <p class="banner info paused-note">
          <strong>Paused</strong>
          {data.note ? <>: “{data.note}”</> : '. No note was given.'}
        </p>
      )}
      {backfilling && (
        <Backfill
          schedule={data}
          onClose={() => setBackfilling(false)}
          onDone={(text) => {
            say(text);
            history.reload();
            schedule.reload();
          }}
        />
      )}
      <div class="schedule-columns">
        <NextTimes schedule={data} />
        <Settings schedule={data} templateName={templateName} />
      </div>
      <History schedule={data} history={history} />
    </section>
  );
}

/** An instant's wall clock in a zone ("Mon 09:00"); '' for a zone this browser does not know. */
function wallClock(iso: string, timeZone?: string): string {
  try {
    return new Intl.DateTimeFormat(undefined, {
      weekday: 'short',
      hour: '2-digit',
      minute: '2-digit',
      timeZone,
    }).format(new Date(iso));
  } catch {
    return '';
  }
}

/**
 * The next five times, in the browser's time (as every time is shown), and in the schedule's
 * zone too where its clock reads otherwise ("Mon 09:00 in America/New_York").
 */
function NextTimes({ schedule }: { schedule: WorkflowSchedule }) {
  return (
    <section class="panel next-times" aria-labelledby="next-times-title">
      <h2 id="next-times-title">Next times</h2>
      {schedule.nextTimes.length === 0 ? (
        <Empty>
          {schedule.state === 'paused'
            ? 'None while it is paused.'
            : 'None: its cadence has ended.'}
        </Empty>
      ) : (
        <ol class="next-time-list">
          {schedule.nextTimes.map((t) => {
            const there = wallClock(t, schedule.timeZone);
            return (
              <li key={t}>
                <Time value={t} />
                {there && there !== wallClock(t) && (
                  <span class="muted small">
                    {' '}
                    ({there} in {schedule.timeZone})
                  </span>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </section>
  );
}

/** Pairs of an object, as a short list ("amount = 1200"), or "none". */
function Pairs({ data, label }: { data: Record<string, string>; label: string }) {
  const entries = Object.entries(data);
  if (!entries.length) return <span class="muted">none</span>;
  return (
    <ul class="plain" aria-label={label}>
      {entries.map(([k, v]) => (
        <li key={k}>
          <code>{k}</code> = {v}
        </li>
      ))}
    </ul>
  );
}

function Settings({
  schedule,
  templateName,
}: {
  schedule: WorkflowSchedule;
  templateName: string;
}) {
  const canTemplates = useCan('templates:read');
  const s = schedule;
  const labels = Object.entries(s.labels);
  return (
    <section class="panel schedule-settings" aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <ScheduleStateBadge state={s.state} />
          {s.note && <span class="muted"> · note: “{s.note}”</span>}
        </dd>
        <dt>Template</dt>
        <dd>
          {canTemplates ? (
            <a href={href(`/templates/${encodeURIComponent(s.templateId)}`)}>{templateName}</a>
          ) : (
            <code>{s.templateId}</code>
          )}{' '}
          <span class="muted">
            {s.templateVersion !== undefined
              ? `version ${s.templateVersion} (pinned)`
              : 'its latest version at each time'}
          </span>
        </dd>
        <dt>Cadence</dt>
        <dd>
          {s.cron !== undefined ? (
            <>
              {cronHasWords(s.cron) ? `${cronWords(s.cron)}: ` : ''}
              <code>{s.cron}</code> <span class="muted">read in {s.timeZone}</span>
            </>
          ) : s.intervalSeconds !== undefined ? (
            <>
              {intervalWords(s.intervalSeconds)}, counted from{' '}
              {s.startAt ? <Time value={s.startAt} /> : <>its creation</>}
            </>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Time zone</dt>
        <dd>{s.timeZone}</dd>
        <dt>Starts</dt>
        <dd>{s.startAt ? <Time value={s.startAt} /> : <span class="muted">at once</span>}</dd>
        <dt>Ends</dt>
        <dd>{s.endAt ? <Time value={s.endAt} /> : <span class="muted">never</span>}</dd>
        <dt>While the previous run is open</dt>
        <dd>
          {OVERLAP_WORDS[s.overlap]} <code class="muted">{s.overlap}</code>
        </dd>
        <dt>Catch-up window</dt>
        <dd>
          {durationWords(s.catchupWindowSeconds)}
          <span class="muted">
            {' '}
            (after downtime, times missed within it still run; older ones are skipped)
          </span>
        </dd>
        <dt>Inputs of each run</dt>
        <dd>
          <Pairs data={s.inputFields} label="Inputs of each run" />
        </dd>
        <dt>Assignees</dt>
        <dd>
          <Pairs data={s.userAssignments} label="Assignees by page" />
        </dd>
        <dt>Labels</dt>
        <dd>
          {labels.length ? (
            <ul class="chips" aria-label="Labels of each run">
              {labels.map(([k, v]) => (
                <li key={k}>
                  <code>
                    {k}:{v}
                  </code>
                </li>
              ))}
            </ul>
          ) : (
            <span class="muted">none</span>
          )}
        </dd>
        <dt>Runs</dt>
        <dd>
          <a href={href('/', { schedule_id: s.id })}>See the runs it created</a>
        </dd>
        <dt>Created</dt>
        <dd>
          <Time value={s.createdAt} />
        </dd>
        <dt>Changed</dt>
        <dd>
          <Time value={s.updatedAt} />
        </dd>
        <dt>Id</dt>
        <dd class="run-id">
          <code>{s.id}</code> <CopyButton text={s.id} label="Copy id" />
        </dd>
      </dl>
    </section>
  );
}

function History({
  schedule,
  history,
}: {
  schedule: WorkflowSchedule;
  history: Loaded<Page<FireRow>>;
}) {
  const { api } = useConsole();
  return (
    <section class="panel schedule-history" aria-labelledby="history-title">
      <h2 id="history-title">
        History <span class="muted small">(newest first)</span>
      </h2>
      {history.error !== undefined && !history.data && (
        <ErrorBanner error={history.error} title="The history could not be read" />
      )}
      {!history.data && history.loading && <Loading what="the history" />}
      {history.data && history.data.items.length === 0 && (
        <Empty>Nothing yet: each of its times is recorded here, with the run it created.</Empty>
      )}
      {history.data && history.data.items.length > 0 && (
        <ol class="timeline" aria-busy={history.loading}>
          {history.data.items.map((fire) => (
            <li
              key={fire.id}
              class={`event fire-${fire.outcome}${fire.reason === 'template_unavailable' ? ' bad' : ''}`}
            >
              <FireRecord fire={fire} />
            </li>
          ))}
        </ol>
      )}
      <LoadMore
        list={history}
        fetch={(cursor) =>
          api
            .page('getWorkflowScheduleHistory', { id: schedule.id, limit: HISTORY_PAGE, cursor })
            .then(rowsOf)
        }
      />
    </section>
  );
}

/** What a backfill did, in words: "12 times: 10 runs created, 2 skipped (…)". */
function backfillWords(result: {
  times: number;
  fired: number;
  buffered?: number;
  skipped: Record<string, number>;
  alreadyRecorded: number;
}): string {
  const parts = [`${result.fired} ${result.fired === 1 ? 'run' : 'runs'} created`];
  if (result.buffered) parts.push(`${result.buffered} held until the previous run ends`);
  for (const [reason, n] of Object.entries(result.skipped)) {
    const words = SKIP_WORDS[reason as SkipReason] ?? reason;
    parts.push(`${n} skipped (${words})`);
  }
  if (result.alreadyRecorded) {
    parts.push(`${result.alreadyRecorded} recorded before, left as they were`);
  }
  return `${result.times} scheduled ${result.times === 1 ? 'time' : 'times'} in the range: ${parts.join(', ')}.`;
}

/** Fires every scheduled time of a past range: from, to, and the overlap rule for them. */
function Backfill({
  schedule,
  onClose,
  onDone,
}: {
  schedule: WorkflowSchedule;
  onClose(): void;
  onDone(text: string): void;
}) {
  const { api } = useConsole();
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [overlap, setOverlap] = useState<Overlap | ''>('');
  const [error, setError] = useState<unknown>(null);
  const [result, setResult] = useState('');
  const [busy, setBusy] = useState(false);
  const field = fieldOf(error);
  const at = (pointer: string) => (field === pointer ? messageOf(error) : undefined);
  const shown = field === '/from' || field === '/to' || field === '/overlap';

  const submit = async (event: Event) => {
    event.preventDefault();
    const answer = await confirmAction({
      title: 'Backfill these times?',
      body: (
        <p>
          A run is created for each scheduled time from <Time value={from} /> to <Time value={to} />{' '}
          that has no record yet (at most 1,000 times), as its cadence would have created it.
        </p>
      ),
      confirm: 'Backfill',
    });
    if (!answer) return;
    setBusy(true);
    setError(null);
    setResult('');
    try {
      const done = await api.backfillWorkflowSchedule({
        id: schedule.id,
        from,
        to,
        ...(overlap ? { overlap } : {}),
      });
      const text = backfillWords(done);
      setResult(text);
      onDone(`Backfilled: ${done.fired} ${done.fired === 1 ? 'run' : 'runs'} created.`);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      id="schedule-backfill"
      class="panel schedule-backfill"
      aria-labelledby="backfill-title"
      noValidate
      onSubmit={(event) => void submit(event)}
    >
      <h2 id="backfill-title">Backfill past times</h2>
      <p class="muted">
        Creates the runs of the scheduled times in a range (both ends included) that have no record
        yet; times already recorded are left as they were.
      </p>
      {!shown && <ErrorBanner error={error} title="Not backfilled" />}
      <div class="filters">
        {(
          [
            ['from', 'From', from, setFrom],
            ['to', 'To', to, setTo],
          ] as const
        ).map(([name, text, value, setValue]) => (
          <div class="field" key={name}>
            <label for={`backfill-${name}`}>
              <span>{text} (your local time)</span>
            </label>
            <input
              id={`backfill-${name}`}
              type="datetime-local"
              required
              value={localInputOf(value)}
              aria-invalid={at(`/${name}`) ? true : undefined}
              aria-describedby={at(`/${name}`) ? `backfill-${name}-error` : undefined}
              onInput={(event) => setValue(isoOfLocalInput(event.currentTarget.value))}
            />
            <FieldMessage id={`backfill-${name}-error`} message={at(`/${name}`)} />
          </div>
        ))}
        <div class="field">
          <label for="backfill-overlap">
            <span>While the previous run is open</span>
          </label>
          <select
            id="backfill-overlap"
            value={overlap}
            onChange={(event) => setOverlap(event.currentTarget.value as Overlap | '')}
          >
            <option value="">As the schedule says: {OVERLAP_WORDS[schedule.overlap]}</option>
            {OVERLAP_POLICIES.map((o) => (
              <option key={o} value={o}>
                {OVERLAP_WORDS[o]}
              </option>
            ))}
          </select>
          <FieldMessage id="backfill-overlap-error" message={at('/overlap')} />
        </div>
      </div>
      {result && (
        <p class="backfill-result" role="status">
          {result}
        </p>
      )}
      <div class="buttons">
        <button type="button" onClick={onClose}>
          Close
        </button>
        <ActionButton
          scope="schedules:write"
          type="submit"
          class="primary"
          disabled={busy || !from || !to}
        >
          {busy ? 'Backfilling…' : 'Backfill'}
        </ActionButton>
      </div>
    </form>
  );
}
