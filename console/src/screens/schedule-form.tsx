// A schedule's form: create one (/schedules/new), or edit one (?edit=1 on its screen). What its
// runs are created with — the template and a version pin, each page's fields (the same typed
// inputs as completing a step: field-input.tsx) and assignee, labels — and its cadence: a cron
// expression (said in words as it is typed) or an interval, its time zone (the organization's,
// from get-organization-settings, unless another is chosen), its start and end, the overlap rule
// and the catch-up window. The API decides what is valid: its refusal shows under the input it
// names (invalid_cron under the expression, invalid_time_zone under the zone, end before start
// under the end), at the top only when the form has no such input.
import { useEffect, useState } from 'preact/hooks';
import type {
  CreateWorkflowScheduleRequest,
  UpdateWorkflowScheduleRequest,
  WorkflowSchedule,
} from 'workflow-run-client';
import { fieldOf, FormError, messageOf } from '../api.js';
import { FieldInput } from '../field-input.js';
import { href } from '../router.js';
import {
  cronHasWords,
  cronWords,
  durationWords,
  intervalWords,
  OVERLAP_WORDS,
} from '../schedule-words.js';
import {
  ActionButton,
  ErrorBanner,
  FieldMessage,
  isoOfLocalInput,
  Loading,
  localInputOf,
  useCan,
  useConsole,
  useLoad,
} from '../ui.js';
import { OVERLAP_POLICIES, type Overlap, type TemplatePage } from '../vocabulary.js';
import { schedulePath, useTemplateNames } from './schedule-parts.js';

/** An amount of a unit (seconds each), as the duration inputs hold it. */
interface Duration {
  amount: string;
  unit: number;
}

const UNITS: ReadonlyArray<readonly [number, string]> = [
  [1, 'seconds'],
  [60, 'minutes'],
  [3600, 'hours'],
  [86_400, 'days'],
];

function durationOf(seconds: number): Duration {
  const [unit] = [...UNITS].reverse().find(([size]) => seconds % size === 0) ?? UNITS[0]!;
  return { amount: String(seconds / unit), unit };
}

function secondsOf(duration: Duration): number | undefined {
  const text = duration.amount.trim();
  return /^\d{1,9}$/.test(text) ? Number(text) * duration.unit : undefined;
}

interface Draft {
  templateId: string;
  /** A pinned version (digits), or '' for the latest at each time. */
  version: string;
  inputs: Record<string, string>;
  assignees: Record<string, string>;
  /** key:value pairs. */
  labels: string[];
  mode: 'cron' | 'interval';
  cron: string;
  interval: Duration;
  timeZone: string;
  startAt: string;
  endAt: string;
  overlap: Overlap;
  catchup: Duration;
  paused: boolean;
  note: string;
}

function draftOf(base: WorkflowSchedule | undefined, templateId: string): Draft {
  return {
    templateId: base?.templateId ?? templateId,
    version: base?.templateVersion !== undefined ? String(base.templateVersion) : '',
    inputs: { ...base?.inputFields },
    assignees: { ...base?.userAssignments },
    labels: Object.entries(base?.labels ?? {}).map(([k, v]) => `${k}:${v}`),
    mode: base?.intervalSeconds !== undefined ? 'interval' : 'cron',
    cron: base?.cron ?? '',
    interval: durationOf(base?.intervalSeconds ?? 3600),
    timeZone: base?.timeZone ?? '',
    startAt: base?.startAt ?? '',
    endAt: base?.endAt ?? '',
    overlap: base?.overlap ?? 'skip',
    catchup: durationOf(base?.catchupWindowSeconds ?? 3600),
    paused: false,
    note: '',
  };
}

/** A JSON Pointer's token (RFC 6901): `~` and `/` escaped. */
const token = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');
const inputPointer = (inputId: string) => `/input_fields/${token(inputId)}`;
const assigneePointer = (page: string) => `/user_assignments/${token(page)}`;
/** An input's id, from its pointer. */
const idOf = (pointer: string) => `schedule${pointer.replace(/[^A-Za-z0-9_-]/g, '-')}`;

/** The values given (blank ones left out). */
function given(values: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
}

/** `{[name]: map}` when the map holds a pair, else nothing. */
function nonEmpty<K extends string>(name: K, map: Record<string, string>) {
  return Object.keys(map).length ? ({ [name]: map } as Record<K, Record<string, string>>) : {};
}

function labelsOf(pairs: string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => [pair.slice(0, pair.indexOf(':')), pair.slice(pair.indexOf(':') + 1)]),
  );
}

let zones: string[] | undefined;
/** The IANA time zones this browser knows, for the zone input's suggestions. */
function timeZones(): string[] {
  zones ??= typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return zones;
}

/** Whether two string maps hold the same pairs. */
function sameMap(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => b[k] === a[k]);
}

/** Two times (or none) as the same instant. */
const sameTime = (a: string | undefined, b: string | undefined) =>
  (a ? Date.parse(a) : null) === (b ? Date.parse(b) : null);

/**
 * An update of what the form changed, only: a cadence, zone, start or end given starts the
 * schedule's times again from now, so none is sent unless it changed.
 */
function changesOf(
  base: WorkflowSchedule,
  body: CreateWorkflowScheduleRequest,
): UpdateWorkflowScheduleRequest {
  const update: UpdateWorkflowScheduleRequest = { id: base.id };
  if (body.workflow_template_version !== base.templateVersion) {
    update.workflow_template_version = body.workflow_template_version ?? null;
  }
  if (!sameMap(body.input_fields ?? {}, base.inputFields)) update.input_fields = body.input_fields;
  if (!sameMap(body.user_assignments ?? {}, base.userAssignments)) {
    update.user_assignments = body.user_assignments;
  }
  if (!sameMap(body.labels ?? {}, base.labels)) update.labels = body.labels;
  if (body.cron !== undefined && body.cron !== base.cron) update.cron = body.cron;
  if (body.interval_seconds !== undefined && body.interval_seconds !== base.intervalSeconds) {
    update.interval_seconds = body.interval_seconds;
  }
  if (body.time_zone !== undefined && body.time_zone !== base.timeZone) {
    update.time_zone = body.time_zone;
  }
  if (!sameTime(body.start_at, base.startAt)) update.start_at = body.start_at ?? null;
  if (!sameTime(body.end_at, base.endAt)) update.end_at = body.end_at ?? null;
  if (body.overlap !== base.overlap) update.overlap = body.overlap;
  if (body.catchup_window_seconds !== base.catchupWindowSeconds) {
    update.catchup_window_seconds = body.catchup_window_seconds;
  }
  return update;
}

export function ScheduleForm({
  base,
  templateId = '',
  onSaved,
  onCancel,
}: {
  /** The schedule edited; none for a new one. */
  base?: WorkflowSchedule;
  /** A new schedule's template, when the URL names one (?template_id=). */
  templateId?: string;
  onSaved(saved: WorkflowSchedule): void;
  onCancel(): void;
}) {
  const { api } = useConsole();
  const canTemplates = useCan('templates:read');
  const canSettings = useCan('runs:read');
  const [draft, setDraft] = useState(() => draftOf(base, templateId));
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [label, setLabel] = useState('');
  const names = useTemplateNames();
  const set = <K extends keyof Draft>(key: K, value: Draft[K]) =>
    setDraft((d) => ({ ...d, [key]: value }));

  const versions = useLoad(
    (a) =>
      canTemplates && draft.templateId
        ? a
            .page('getWorkflowTemplateVersions', { id: draft.templateId, limit: 100 })
            .then((p) => p.items)
        : Promise.resolve(undefined),
    [draft.templateId, canTemplates],
  );
  const template = useLoad(
    (a) =>
      canTemplates && draft.templateId
        ? a.getWorkflowTemplate({
            id: draft.templateId,
            version: draft.version ? Number(draft.version) : undefined,
          })
        : Promise.resolve(undefined),
    [draft.templateId, draft.version, canTemplates],
  );
  // A new schedule's zone is the organization's unless another is typed.
  const settings = useLoad(
    (a) => (!base && canSettings ? a.getOrganizationSettings() : Promise.resolve(undefined)),
    [],
  );
  const orgZone = settings.data?.timeZone;
  useEffect(() => {
    if (orgZone) setDraft((d) => (d.timeZone ? d : { ...d, timeZone: orgZone }));
  }, [orgZone]);

  const pages: TemplatePage[] = template.data?.pages ?? [];
  // Where the API's refusal shows: under the input of the pointer it names, or of the nearest
  // one leading to it (the labels' group for /labels/env); at the top when there is none.
  const pointers = [
    '/workflow_template_id',
    '/workflow_template_version',
    '/input_fields',
    '/user_assignments',
    '/labels',
    '/cron',
    '/interval_seconds',
    '/time_zone',
    '/start_at',
    '/end_at',
    '/overlap',
    '/catchup_window_seconds',
    '/paused',
    '/note',
    ...pages.flatMap((p) => [
      assigneePointer(p.name),
      ...p.inputFields.map((f) => inputPointer(f.inputId)),
    ]),
  ];
  const named = fieldOf(error);
  const place = named
    ? pointers
        .filter((p) => named === p || named.startsWith(`${p}/`))
        .sort((a, b) => b.length - a.length)[0]
    : undefined;
  const messageAt = (pointer: string) => (place === pointer ? messageOf(error) : undefined);
  const describe = (pointer: string, help?: boolean) =>
    [help ? `${idOf(pointer)}-help` : '', messageAt(pointer) ? `${idOf(pointer)}-error` : '']
      .filter(Boolean)
      .join(' ') || undefined;
  const invalid = (pointer: string) => (messageAt(pointer) ? true : undefined);

  const bodyOf = (): CreateWorkflowScheduleRequest => {
    if (!draft.templateId) throw new FormError('Choose a template.', '/workflow_template_id');
    const cadence: { cron?: string; interval_seconds?: number } = {};
    if (draft.mode === 'cron') {
      if (!draft.cron.trim()) {
        throw new FormError('Give a cron expression, such as 0 9 * * 1-5.', '/cron');
      }
      cadence.cron = draft.cron.trim();
    } else {
      const seconds = secondsOf(draft.interval);
      if (seconds === undefined) {
        throw new FormError('Give the interval as a whole number.', '/interval_seconds');
      }
      cadence.interval_seconds = seconds;
    }
    const catchup = secondsOf(draft.catchup);
    if (catchup === undefined) {
      throw new FormError('Give the catch-up window as a whole number.', '/catchup_window_seconds');
    }
    return {
      workflow_template_id: draft.templateId,
      ...(draft.version ? { workflow_template_version: Number(draft.version) } : {}),
      ...nonEmpty('input_fields', given(draft.inputs)),
      ...nonEmpty('user_assignments', given(draft.assignees)),
      ...nonEmpty('labels', labelsOf(draft.labels)),
      ...cadence,
      ...(draft.timeZone.trim() ? { time_zone: draft.timeZone.trim() } : {}),
      ...(draft.startAt ? { start_at: draft.startAt } : {}),
      ...(draft.endAt ? { end_at: draft.endAt } : {}),
      overlap: draft.overlap,
      catchup_window_seconds: catchup,
    };
  };

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body = bodyOf();
      let saved: WorkflowSchedule;
      if (base) {
        const update = changesOf(base, body);
        // Nothing changed: nothing is sent (an update is a change, recorded as one).
        saved = Object.keys(update).length > 1 ? await api.updateWorkflowSchedule(update) : base;
      } else {
        saved = await api.createWorkflowSchedule({
          ...body,
          ...(draft.paused ? { paused: true } : {}),
          ...(draft.paused && draft.note.trim() ? { note: draft.note.trim() } : {}),
        });
      }
      onSaved(saved);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const addLabel = () => {
    const text = label.trim();
    const at = text.indexOf(':');
    if (at < 1 || draft.labels.includes(text)) return;
    const key = text.slice(0, at);
    set('labels', [...draft.labels.filter((l) => !l.startsWith(`${key}:`)), text]);
    setLabel('');
  };

  const cronShown = draft.cron.trim();
  const intervalSeconds = secondsOf(draft.interval);
  const catchupSeconds = secondsOf(draft.catchup);
  const title = base ? 'Edit the schedule' : 'New schedule';
  return (
    <form class="panel schedule-form" aria-label={title} noValidate onSubmit={submit}>
      {!place && <ErrorBanner error={error} title="Not saved" />}
      <div class="schedule-form-columns">
        <fieldset>
          <legend>What each run is</legend>
          <div class="field">
            {base ? (
              <span>Template</span>
            ) : (
              <label for={idOf('/workflow_template_id')}>
                <span>Template</span>
              </label>
            )}
            {base ? (
              <p class="schedule-template">
                {names.of(base.templateId)}{' '}
                <span class="muted">(a schedule keeps its template)</span>
              </p>
            ) : names.list ? (
              <select
                id={idOf('/workflow_template_id')}
                value={draft.templateId}
                aria-invalid={invalid('/workflow_template_id')}
                aria-describedby={describe('/workflow_template_id')}
                onChange={(event) =>
                  setDraft((d) => ({
                    ...d,
                    templateId: event.currentTarget.value,
                    version: '',
                    inputs: {},
                    assignees: {},
                  }))
                }
              >
                <option value="">— choose a template —</option>
                {names.list.map((t) => (
                  <option key={t.id} value={t.id}>
                    {t.name}
                  </option>
                ))}
                {draft.templateId && !names.list.some((t) => t.id === draft.templateId) && (
                  <option value={draft.templateId}>{draft.templateId}</option>
                )}
              </select>
            ) : (
              <input
                id={idOf('/workflow_template_id')}
                value={draft.templateId}
                placeholder="a template's id"
                aria-invalid={invalid('/workflow_template_id')}
                aria-describedby={describe('/workflow_template_id')}
                onInput={(event) => set('templateId', event.currentTarget.value.trim())}
              />
            )}
            <FieldMessage
              id={`${idOf('/workflow_template_id')}-error`}
              message={messageAt('/workflow_template_id')}
            />
          </div>
          <div class="field">
            <label for={idOf('/workflow_template_version')}>
              <span>Version</span>
            </label>
            <select
              id={idOf('/workflow_template_version')}
              value={draft.version}
              aria-invalid={invalid('/workflow_template_version')}
              aria-describedby={describe('/workflow_template_version')}
              onChange={(event) => set('version', event.currentTarget.value)}
            >
              <option value="">The template's latest version at each time</option>
              {(versions.data ?? []).map((v) => (
                <option key={v.version} value={String(v.version)}>
                  Version {v.version} only
                </option>
              ))}
              {draft.version &&
                !versions.data?.some((v) => String(v.version) === draft.version) && (
                  <option value={draft.version}>Version {draft.version} only</option>
                )}
            </select>
            <FieldMessage
              id={`${idOf('/workflow_template_version')}-error`}
              message={messageAt('/workflow_template_version')}
            />
          </div>
          <RunInputs
            draft={draft}
            pages={pages}
            canTemplates={canTemplates}
            loading={template.loading && !!draft.templateId}
            error={template.error}
            messageAt={messageAt}
            onInput={(inputId, value) =>
              setDraft((d) => ({ ...d, inputs: { ...d.inputs, [inputId]: value } }))
            }
            onAssignee={(page, value) =>
              setDraft((d) => ({ ...d, assignees: { ...d.assignees, [page]: value } }))
            }
          />
          <div class="field" data-pointer="/labels">
            <label for={idOf('/labels')}>
              <span>Labels of each run (key:value)</span>
            </label>
            <div class="inline">
              <input
                id={idOf('/labels')}
                value={label}
                placeholder="source:schedule"
                aria-invalid={invalid('/labels')}
                aria-describedby={describe('/labels')}
                onInput={(event) => setLabel(event.currentTarget.value)}
                onKeyDown={(event) => {
                  if (event.key === 'Enter') {
                    event.preventDefault();
                    addLabel();
                  }
                }}
              />
              <button type="button" onClick={addLabel}>
                Add label
              </button>
            </div>
            {draft.labels.length > 0 && (
              <ul class="chips" aria-label="Labels of each run">
                {draft.labels.map((l) => (
                  <li key={l}>
                    <code>{l}</code>{' '}
                    <button
                      type="button"
                      aria-label={`Remove label ${l}`}
                      onClick={() =>
                        set(
                          'labels',
                          draft.labels.filter((x) => x !== l),
                        )
                      }
                    >
                      ×
                    </button>
                  </li>
                ))}
              </ul>
            )}
            <FieldMessage id={`${idOf('/labels')}-error`} message={messageAt('/labels')} />
          </div>
        </fieldset>

        <div>
          <fieldset>
            <legend>When</legend>
            <fieldset class="choices cadence-mode">
              <legend>Cadence</legend>
              <label class="check">
                <input
                  type="radio"
                  name="cadence"
                  checked={draft.mode === 'cron'}
                  onChange={() => set('mode', 'cron')}
                />{' '}
                A cron expression
              </label>
              <label class="check">
                <input
                  type="radio"
                  name="cadence"
                  checked={draft.mode === 'interval'}
                  onChange={() => set('mode', 'interval')}
                />{' '}
                An interval
              </label>
            </fieldset>
            {draft.mode === 'cron' ? (
              <div class="field">
                <label for={idOf('/cron')}>
                  <span>Cron expression</span>
                </label>
                <input
                  id={idOf('/cron')}
                  class="mono"
                  value={draft.cron}
                  placeholder="0 9 * * 1-5"
                  autocomplete="off"
                  spellcheck={false}
                  aria-invalid={invalid('/cron')}
                  aria-describedby={describe('/cron', true)}
                  onInput={(event) => set('cron', event.currentTarget.value)}
                />
                <p class="field-help" id={`${idOf('/cron')}-help`}>
                  Five fields: minute, hour, day of the month, month, day of the week; read in the
                  time zone below.
                  {cronShown && (
                    <>
                      {' '}
                      <span class="cron-words" aria-live="polite">
                        {cronHasWords(cronShown)
                          ? `Reads: ${cronWords(cronShown)}.`
                          : 'Not a shape said in words here: the service reads it as written.'}
                      </span>
                    </>
                  )}
                </p>
                <FieldMessage id={`${idOf('/cron')}-error`} message={messageAt('/cron')} />
              </div>
            ) : (
              <DurationInput
                pointer="/interval_seconds"
                label="Interval"
                value={draft.interval}
                onValue={(v) => set('interval', v)}
                message={messageAt('/interval_seconds')}
                help={
                  intervalSeconds !== undefined
                    ? `A run ${intervalWords(intervalSeconds)}, counted from the start (at least every minute).`
                    : 'At least a minute; counted from the start.'
                }
              />
            )}
            <div class="field">
              <label for={idOf('/time_zone')}>
                <span>Time zone</span>
              </label>
              <input
                id={idOf('/time_zone')}
                list="schedule-time-zones"
                value={draft.timeZone}
                placeholder={orgZone ?? "the organization's"}
                autocomplete="off"
                aria-invalid={invalid('/time_zone')}
                aria-describedby={describe('/time_zone', true)}
                onInput={(event) => set('timeZone', event.currentTarget.value)}
              />
              <datalist id="schedule-time-zones">
                {timeZones().map((zone) => (
                  <option key={zone} value={zone} />
                ))}
              </datalist>
              <p class="field-help" id={`${idOf('/time_zone')}-help`}>
                An IANA name such as Europe/Berlin.{' '}
                {orgZone ? `The organization's is ${orgZone}.` : "Left empty: the organization's."}
              </p>
              <FieldMessage id={`${idOf('/time_zone')}-error`} message={messageAt('/time_zone')} />
            </div>
            <div class="filters">
              {(
                [
                  [
                    '/start_at',
                    'startAt',
                    'Start (optional)',
                    'No time before this; your local time.',
                  ],
                  ['/end_at', 'endAt', 'End (optional)', 'No time after this; your local time.'],
                ] as const
              ).map(([pointer, key, text, help]) => (
                <div class="field" key={key}>
                  <label for={idOf(pointer)}>
                    <span>{text}</span>
                  </label>
                  <input
                    id={idOf(pointer)}
                    type="datetime-local"
                    value={localInputOf(draft[key])}
                    aria-invalid={invalid(pointer)}
                    aria-describedby={describe(pointer, true)}
                    onInput={(event) => set(key, isoOfLocalInput(event.currentTarget.value))}
                  />
                  <small class="muted" id={`${idOf(pointer)}-help`}>
                    {help}
                  </small>
                  <FieldMessage id={`${idOf(pointer)}-error`} message={messageAt(pointer)} />
                </div>
              ))}
            </div>
          </fieldset>

          <fieldset>
            <legend>Overlaps and downtime</legend>
            <div class="field">
              <label for={idOf('/overlap')}>
                <span>When a time comes while the previous run is still open</span>
              </label>
              <select
                id={idOf('/overlap')}
                value={draft.overlap}
                aria-invalid={invalid('/overlap')}
                aria-describedby={describe('/overlap')}
                onChange={(event) => set('overlap', event.currentTarget.value as Overlap)}
              >
                {OVERLAP_POLICIES.map((o) => (
                  <option key={o} value={o}>
                    {OVERLAP_WORDS[o]}
                  </option>
                ))}
              </select>
              <FieldMessage id={`${idOf('/overlap')}-error`} message={messageAt('/overlap')} />
            </div>
            <DurationInput
              pointer="/catchup_window_seconds"
              label="Catch-up window"
              value={draft.catchup}
              onValue={(v) => set('catchup', v)}
              message={messageAt('/catchup_window_seconds')}
              help={`After downtime, times missed within ${
                catchupSeconds !== undefined ? durationWords(catchupSeconds) : 'this'
              } still run, in order; older ones are skipped.`}
            />
          </fieldset>

          {!base && (
            <fieldset>
              <legend>State</legend>
              <label class="check">
                <input
                  type="checkbox"
                  checked={draft.paused}
                  onChange={(event) => set('paused', event.currentTarget.checked)}
                />{' '}
                Create it paused
              </label>
              <FieldMessage id={`${idOf('/paused')}-error`} message={messageAt('/paused')} />
              {draft.paused && (
                <div class="field">
                  <label for={idOf('/note')}>
                    <span>Note (optional): why it is paused</span>
                  </label>
                  <textarea
                    id={idOf('/note')}
                    maxLength={1000}
                    value={draft.note}
                    aria-invalid={invalid('/note')}
                    aria-describedby={describe('/note')}
                    onInput={(event) => set('note', event.currentTarget.value)}
                  />
                  <FieldMessage id={`${idOf('/note')}-error`} message={messageAt('/note')} />
                </div>
              )}
            </fieldset>
          )}
        </div>
      </div>
      <div class="buttons">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <ActionButton scope="schedules:write" type="submit" class="primary" disabled={busy}>
          {busy ? 'Saving…' : base ? 'Save schedule' : 'Create schedule'}
        </ActionButton>
      </div>
      {base && (
        <p class="muted small">
          <a href={href(schedulePath(base.id))}>Back to the schedule</a> without saving.
        </p>
      )}
    </form>
  );
}

/** A number and its unit, sent as seconds (the interval, the catch-up window). */
function DurationInput({
  pointer,
  label,
  value,
  onValue,
  message,
  help,
}: {
  pointer: string;
  label: string;
  value: Duration;
  onValue(value: Duration): void;
  message?: string;
  help: string;
}) {
  const id = idOf(pointer);
  const describedBy = [`${id}-help`, message ? `${id}-error` : ''].filter(Boolean).join(' ');
  return (
    <div class="field duration">
      <label for={id}>
        <span>{label}</span>
      </label>
      <div class="inline">
        <input
          id={id}
          type="number"
          min={0}
          step={1}
          inputMode="numeric"
          value={value.amount}
          aria-invalid={message ? true : undefined}
          aria-describedby={describedBy}
          onInput={(event) => onValue({ ...value, amount: event.currentTarget.value })}
        />
        <select
          aria-label={`Unit of the ${label.toLowerCase()}`}
          value={String(value.unit)}
          onChange={(event) => onValue({ ...value, unit: Number(event.currentTarget.value) })}
        >
          {UNITS.map(([size, name]) => (
            <option key={size} value={String(size)}>
              {name}
            </option>
          ))}
        </select>
      </div>
      <p class="field-help" id={`${id}-help`}>
        {help}
      </p>
      <FieldMessage id={`${id}-error`} message={message} />
    </div>
  );
}

/**
 * The values each run starts with, page by page (each field's own input, as the template
 * version defines it), and each page's assignee. Without templates:read the fields cannot be
 * listed: the values kept are shown, and sent as they are.
 */
function RunInputs({
  draft,
  pages,
  canTemplates,
  loading,
  error,
  messageAt,
  onInput,
  onAssignee,
}: {
  draft: Draft;
  pages: TemplatePage[];
  canTemplates: boolean;
  loading: boolean;
  error: unknown;
  messageAt(pointer: string): string | undefined;
  onInput(inputId: string, value: string): void;
  onAssignee(page: string, value: string): void;
}) {
  const groupMessage = messageAt('/input_fields') ?? messageAt('/user_assignments');
  if (!canTemplates) {
    const kept = Object.entries(given(draft.inputs));
    return (
      <div class="field">
        <p class="muted">
          This key does not hold <code>templates:read</code>, so the template's fields are not
          listed.{' '}
          {kept.length
            ? `The values kept: ${kept.map(([k, v]) => `${k} = ${v}`).join(', ')}.`
            : 'Runs start with no values.'}
        </p>
        <FieldMessage id="schedule-inputs-error" message={groupMessage} />
      </div>
    );
  }
  if (!draft.templateId) return null;
  if (loading && pages.length === 0) return <Loading what="the template's fields" />;
  return (
    <div class="schedule-inputs">
      <ErrorBanner error={error} title="The template's fields could not be read" />
      <FieldMessage id="schedule-inputs-error" message={groupMessage} />
      {pages.map((page, index) => (
        <fieldset key={page.name} class="schedule-page">
          <legend>
            Page {index + 1}: {page.name}
          </legend>
          <div class="field">
            <label for={idOf(assigneePointer(page.name))}>
              <span>Assignee (optional)</span>
            </label>
            <input
              id={idOf(assigneePointer(page.name))}
              value={draft.assignees[page.name] ?? ''}
              aria-invalid={messageAt(assigneePointer(page.name)) ? true : undefined}
              aria-describedby={
                messageAt(assigneePointer(page.name))
                  ? `${idOf(assigneePointer(page.name))}-error`
                  : undefined
              }
              onInput={(event) => onAssignee(page.name, event.currentTarget.value.trim())}
            />
            <FieldMessage
              id={`${idOf(assigneePointer(page.name))}-error`}
              message={messageAt(assigneePointer(page.name))}
            />
          </div>
          {page.inputFields.map((f) => (
            <FieldInput
              key={f.inputId}
              id={idOf(inputPointer(f.inputId))}
              label={
                <>
                  <span>{f.fieldName}</span> <span class="muted">(optional)</span>
                </>
              }
              field={f}
              value={draft.inputs[f.inputId] ?? ''}
              message={messageAt(inputPointer(f.inputId))}
              onValue={(value) => onInput(f.inputId, value)}
            />
          ))}
        </fieldset>
      ))}
    </div>
  );
}
