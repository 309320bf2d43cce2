// One run: its facts, steps, inputs and history, and the actions its status allows — complete
// the current step through a form built from the step's fields, cancel with a reason, retry a
// failed run. A worker applies completions and retries after the API's 202, so the screen
// follows the run's own event stream and reads the run again as each change lands.
import { useEffect, useRef, useState } from 'preact/hooks';
import type { WorkflowRunDetail, WorkflowTemplateDetail } from 'workflow-run-client';
import { fieldOf, messageOf } from '../api.js';
import { FieldInput } from '../field-input.js';
import { valueWords } from '../field-types.js';
import { href } from '../router.js';
import { ruleLabel } from '../rule-words.js';
import { openStream } from '../stream.js';
import { MigrateRun } from './run-migration.js';
import {
  ActionButton,
  confirmAction,
  CopyButton,
  Empty,
  ErrorBanner,
  fieldError,
  Loading,
  ScreenHeader,
  StatusBadge,
  Time,
  useCan,
  useConsole,
  useLoad,
  useNotice,
  type Loaded,
} from '../ui.js';
import type {
  Actor,
  EventType,
  FieldType,
  Rule,
  RunHistoryEntry,
  RunStep,
  TemplateField,
  TemplatePage,
} from '../vocabulary.js';

export function RunScreen({ id }: { id: string }) {
  const canRead = useCan('runs:read');
  if (!canRead) {
    return (
      <section>
        <ScreenHeader title="Run" />
        <p class="banner info">
          This key does not hold the <code>runs:read</code> scope, so it cannot read runs. Sign in
          with a key that holds it to see this run.
        </p>
      </section>
    );
  }
  return <RunView key={id} id={id} />;
}

function RunView({ id }: { id: string }) {
  const { api } = useConsole();
  const canTemplates = useCan('templates:read');
  const run = useLoad((a) => a.getWorkflowRun({ id }), [id]);
  const templateId = run.data?.templateId;
  const version = run.data?.templateVersion;
  const template = useLoad(
    (a) =>
      templateId && canTemplates
        ? a.getWorkflowTemplate({ id: templateId, version })
        : Promise.resolve(undefined),
    [templateId, version, canTemplates],
  );
  const [notice, say] = useNotice();
  const [actionError, setActionError] = useState<unknown>(null);
  const [migrating, setMigrating] = useState(false);
  const stream = useRunStream(id, run);

  if (run.error && !run.data) {
    return (
      <section>
        <ScreenHeader title="Run" />
        <ErrorBanner error={run.error} title="The run could not be read" />
        <p>
          <a href={href('/')}>Back to the runs</a>
        </p>
      </section>
    );
  }
  if (!run.data) return <Loading what="the run" />;
  const data = run.data;

  const act = async (what: () => Promise<unknown>, done: string) => {
    setActionError(null);
    try {
      await what();
      say(done);
    } catch (error) {
      setActionError(error);
    }
    run.reload();
  };

  const cancel = async () => {
    const answer = await confirmAction({
      title: 'Cancel this run?',
      body: (
        <p>
          <strong>{data.workflowName}</strong> stops at once: its current step is cancelled and no
          further step starts. This cannot be undone.
        </p>
      ),
      confirm: 'Cancel run',
      danger: true,
      reason: { label: 'Reason (kept in the history)', maxLength: 1000 },
    });
    if (!answer) return;
    await act(
      () =>
        api.cancelWorkflowRun({
          workflow_run_id: data.id,
          ...(answer.reason ? { reason: answer.reason } : {}),
        }),
      'The run was cancelled.',
    );
  };

  const retry = async () => {
    const answer = await confirmAction({
      title: 'Retry this run?',
      body: <p>The change that failed is requested again; a worker applies it.</p>,
      confirm: 'Retry run',
    });
    if (!answer) return;
    await act(
      () => api.retryWorkflowRun({ workflow_run_id: data.id }),
      'Retry requested: a worker applies it.',
    );
  };

  const ruleOf = ruleNamer(template.data?.rules, data.history);
  const cancellable = data.status === 'pending' || data.status === 'active';
  const currentPage = template.data?.pages.find((p) => p.name === data.currentStepName);

  return (
    <section class="run-screen">
      <p class="crumbs">
        <a href={href('/')}>Runs</a> <span aria-hidden="true">›</span>
      </p>
      <ScreenHeader title={data.workflowName}>
        {cancellable && (
          <ActionButton
            scope="runs:write"
            aria-expanded={migrating}
            aria-controls={migrating ? 'migrate-run' : undefined}
            onClick={() => setMigrating(true)}
          >
            Move to version…
          </ActionButton>
        )}
        {cancellable && (
          <ActionButton scope="runs:write" class="danger" onClick={() => void cancel()}>
            Cancel run
          </ActionButton>
        )}
        {data.status === 'failed' && (
          <ActionButton scope="runs:write" class="primary" onClick={() => void retry()}>
            Retry run
          </ActionButton>
        )}
      </ScreenHeader>
      <p class="stream-state" role="status" aria-live="polite">
        <span class={`dot ${stream.live ? 'live' : 'reconnecting'}`} aria-hidden="true" />
        {stream.live
          ? 'Live: changes show as they happen'
          : stream.ended
            ? `No live updates: ${messageOf(stream.ended)}`
            : 'Connecting to live updates…'}
      </p>
      {notice}
      <ErrorBanner error={actionError} title="The action was refused" />
      {run.error && <ErrorBanner error={run.error} title="The run could not be read again" />}
      <Outcome run={data} />
      {data.scheduleId && (
        <p class="scheduled-by">
          Created by schedule{' '}
          <a href={href(`/schedules/${encodeURIComponent(data.scheduleId)}`)}>
            <code>{data.scheduleId}</code>
          </a>
          {data.scheduledFor && (
            <>
              {' '}
              for <Time value={data.scheduledFor} />
            </>
          )}
        </p>
      )}
      <Facts run={data} />
      {migrating && cancellable && (
        <MigrateRun
          key={data.templateVersion}
          run={data}
          from={template}
          canTemplates={canTemplates}
          onClose={() => setMigrating(false)}
          onMoved={(migration) => {
            setMigrating(false);
            say(`Moved to version ${migration.toVersion} from version ${migration.fromVersion}.`);
            run.reload();
          }}
        />
      )}
      {data.status === 'active' && data.currentStepName && (
        <CompleteStep
          key={data.currentStepName}
          run={data}
          page={currentPage}
          template={template}
          canTemplates={canTemplates}
          onDone={() => {
            say('Completion sent: a worker applies it.');
            run.reload();
          }}
        />
      )}
      {data.status === 'pending' && (
        <p class="banner info">
          Pending: a worker starts (or applies the retried change of) this run.
        </p>
      )}
      <Steps run={data} rule={ruleOf} />
      <Inputs run={data} pages={template.data?.pages} />
      <History history={data.history} rule={ruleOf} />
    </section>
  );
}

/**
 * Follows the run's events; each one reads the run again. `live` while connected; `ended` with
 * the service's refusal when it refused the stream (it is not tried again).
 */
function useRunStream(
  id: string,
  run: Loaded<WorkflowRunDetail>,
): { live: boolean; ended?: unknown } {
  const { api } = useConsole();
  const [state, setState] = useState<{ live: boolean; ended?: unknown }>({ live: false });
  const reload = useRef(run.reload);
  reload.current = run.reload;
  const found = run.data !== undefined;
  useEffect(() => {
    if (!found) return; // an unknown run has no stream (404): its error shows instead
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => reload.current(), 100);
    };
    const close = openStream(
      api,
      { run_id: id },
      {
        onEvent: soon,
        onState: (connected) => {
          setState({ live: connected });
          // Whatever happened while (re)connecting is read once the stream is open.
          if (connected) soon();
        },
        onEnd: (error) => setState({ live: false, ended: error }),
      },
    );
    return () => {
      clearTimeout(timer);
      close();
    };
  }, [api, id, found]);
  return state;
}

/** A failed or cancelled run says so at the top, in words. */
function Outcome({ run }: { run: WorkflowRunDetail }) {
  if (run.status === 'failed') {
    const failed = lastOf(run.history, 'run.failed');
    return (
      <div class="banner error outcome">
        <strong>Failed</strong>
        {run.error ? <>: {run.error.message}</> : null} (
        <Time value={run.error?.at ?? failed?.at} />
        ). Retrying requests the failed change again.
      </div>
    );
  }
  if (run.status === 'cancelled') {
    const cancelled = lastOf(run.history, 'run.cancelled');
    const reason = cancelled && str(cancelled.data.reason);
    return (
      <div class="banner outcome cancelled">
        <strong>Cancelled</strong>
        {cancelled && (
          <>
            {' '}
            by <ActorName actor={cancelled.actor} /> (<Time value={cancelled.at} />)
          </>
        )}
        {reason ? <>: “{reason}”</> : '. No reason was given.'}
      </div>
    );
  }
  if (run.status === 'completed') {
    const completed = lastOf(run.history, 'run.completed');
    return (
      <div class="banner outcome completed">
        <strong>Completed</strong> (<Time value={completed?.at ?? run.lastActivity} />
        ).
      </div>
    );
  }
  return null;
}

function Facts({ run }: { run: WorkflowRunDetail }) {
  const labels = Object.entries(run.labels);
  return (
    <div class="panel">
      <h2 class="visually-hidden">Facts</h2>
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={run.status} />
        </dd>
        <dt>Template</dt>
        <dd>
          <a
            href={href(`/templates/${encodeURIComponent(run.templateId)}`, {
              version: String(run.templateVersion),
            })}
          >
            {run.workflowName}
          </a>{' '}
          <span class="muted">version {run.templateVersion}</span>
        </dd>
        <dt>Current step</dt>
        <dd>
          {run.currentStepName ?? <span class="muted">none</span>}
          {run.currentStepAssignee && <> · assigned to {run.currentStepAssignee}</>}
          {run.currentStepDueDate && (
            <>
              {' '}
              · due <Time value={run.currentStepDueDate} />
            </>
          )}
        </dd>
        <dt>Labels</dt>
        <dd>
          {labels.length ? (
            <ul class="chips" aria-label="Labels">
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
        <dt>Created</dt>
        <dd>
          <Time value={run.createdAt} />
        </dd>
        <dt>Last activity</dt>
        <dd>
          <Time value={run.lastActivity} />
        </dd>
        <dt>Id</dt>
        <dd class="run-id">
          <code>{run.id}</code> <CopyButton text={run.id} label="Copy id" />
        </dd>
      </dl>
    </div>
  );
}

/** The JSON Pointer the API names an input field of the completion by. */
function inputPointer(inputId: string): string {
  return `/input_fields/${inputId.replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function fromPointer(pointer: string): string | undefined {
  if (!pointer.startsWith('/input_fields/')) return undefined;
  return pointer.slice('/input_fields/'.length).replace(/~1/g, '/').replace(/~0/g, '~');
}

/**
 * The form completing the current step: one input per field of the step's page (its template
 * version's), required ones marked. The API decides what is missing; its message shows next to
 * the field it names. Without templates:read the fields cannot be listed: the form sends none,
 * and a field the API then asks for is added to it.
 */
function CompleteStep({
  run,
  page,
  template,
  canTemplates,
  onDone,
}: {
  run: WorkflowRunDetail;
  page: TemplatePage | undefined;
  template: Loaded<WorkflowTemplateDetail | undefined>;
  canTemplates: boolean;
  onDone(): void;
}) {
  const { api } = useConsole();
  const step = run.currentStepName!;
  const [extra, setExtra] = useState<TemplateField[]>([]);
  const fields = [...(page?.inputFields ?? []), ...extra];
  // What the form has changed; a field it has not shows the run's value. The page may arrive
  // after the run: its fields show their values at their first render, never a blank first.
  const [values, setValues] = useState<Record<string, string>>({});
  const valueOf = (inputId: string) => values[inputId] ?? run.inputFields[inputId] ?? '';
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const shownField = (pointer: string) => fields.some((f) => inputPointer(f.inputId) === pointer);
  const named = fieldOf(error);
  const topError = named && shownField(named) ? null : error;
  // An approval step is completed by a decision, with an optional comment.
  const approval = run.steps.find((s) => s.name === step)?.kind === 'approval';
  const [comment, setComment] = useState('');

  const submit = async (decision?: 'approved' | 'rejected') => {
    const answer = await confirmAction({
      title: decision
        ? `${decision === 'approved' ? 'Approve' : 'Reject'} “${step}”?`
        : `Complete “${step}”?`,
      body: (
        <p>
          {decision === 'rejected'
            ? 'The rejection is recorded with its comment; what follows is what the template says (the work goes back, or the run fails).'
            : fields.length
              ? `The values entered are saved with the step${run.steps.at(-1)?.name === step ? ', and the run completes' : ', and the next step starts'}.`
              : 'The step is completed with no new values.'}
        </p>
      ),
      confirm: decision ? (decision === 'approved' ? 'Approve' : 'Reject') : 'Complete step',
    });
    if (!answer) return;
    setBusy(true);
    setError(null);
    try {
      await api.completeWorkflowStep({
        workflow_run_id: run.id,
        step_name: step,
        // Only what the form changes: a value kept as it was stays where it came from.
        input_fields: Object.fromEntries(
          fields
            .map((f) => [f.inputId, valueOf(f.inputId)] as const)
            .filter(([k, v]) => v !== (run.inputFields[k] ?? '')),
        ),
        ...(decision ? { decision, ...(comment.trim() ? { comment: comment.trim() } : {}) } : {}),
      });
      setSent(true);
      onDone();
    } catch (e) {
      setError(e);
      const pointer = fieldOf(e);
      const inputId = pointer ? fromPointer(pointer) : undefined;
      if (inputId !== undefined && !fields.some((f) => f.inputId === inputId)) {
        setExtra((x) => [...x, { inputId, fieldName: inputId, required: true }]);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="panel complete-step"
      aria-labelledby="complete-title"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit(approval ? 'approved' : undefined);
      }}
    >
      <h2 id="complete-title">
        {approval ? 'Decide the current step' : 'Complete the current step'}: {step}
      </h2>
      {sent ? (
        <p role="status">Completion sent. A worker applies it; this page updates when it does.</p>
      ) : null}
      {template.loading && canTemplates && !page ? <Loading what="the step's fields" /> : null}
      {!canTemplates && (
        <p class="muted">
          This key does not hold <code>templates:read</code>, so the step's fields are not listed; a
          field the step requires is asked for when the API names it.
        </p>
      )}
      {template.error ? (
        <ErrorBanner error={template.error} title="The step's fields could not be read" />
      ) : null}
      <ErrorBanner error={topError} title="Not completed" />
      {page && page.inputFields.length === 0 && extra.length === 0 && (
        <p class="muted">This step has no fields.</p>
      )}
      <div class="fields">
        {fields.map((f) => {
          const id = `complete-${f.inputId}`;
          return (
            <FieldInput
              key={f.inputId}
              id={id}
              label={
                <>
                  <span>{f.fieldName}</span>
                  {f.required ? (
                    <span class="required"> (required)</span>
                  ) : (
                    <span class="muted"> (optional)</span>
                  )}
                </>
              }
              field={f}
              value={valueOf(f.inputId)}
              required={f.required}
              message={fieldError(error, inputPointer(f.inputId))}
              onValue={(value) => setValues((v) => ({ ...v, [f.inputId]: value }))}
            />
          );
        })}
      </div>
      {approval && (
        <label class="field">
          <span>Comment (optional)</span>
          <textarea
            maxLength={4000}
            value={comment}
            onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)}
          />
        </label>
      )}
      <div class="buttons">
        <ActionButton scope="runs:write" type="submit" class="primary" disabled={busy}>
          {approval ? 'Approve' : 'Complete step'}
        </ActionButton>
        {approval && (
          <ActionButton
            scope="runs:write"
            type="button"
            disabled={busy}
            onClick={() => void submit('rejected')}
          >
            Reject
          </ActionButton>
        )}
      </div>
    </form>
  );
}

/** Names a rule of the run's template by its index: its name from the template, or else from
 * the step.skipped event that named it (a key without templates:read still reads those). */
type RuleNamer = (index: number) => string;

function ruleNamer(rules: Rule[] | undefined, history: RunHistoryEntry[]): RuleNamer {
  return (index) => {
    let name = rules?.[index]?.name;
    if (name === undefined) {
      const skipped = history.find((e) => e.type === 'step.skipped' && e.data.rule === index);
      name = skipped ? str(skipped.data.ruleName) || undefined : undefined;
    }
    return ruleLabel(index, name);
  };
}

/** What the template's rules decided of a step, in words. */
function stepRules(step: RunStep, rule: RuleNamer): string[] {
  const r = step.rules;
  if (!r) return [];
  const words: string[] = [];
  if (r.hiddenBy !== undefined) words.push(`skipped by ${rule(r.hiddenBy)}`);
  if (r.notShownBy !== undefined) words.push(`not shown: ${rule(r.notShownBy)} did not apply`);
  if (r.shownBy !== undefined) words.push(`shown by ${rule(r.shownBy)}`);
  if (r.dueBy !== undefined) words.push(`due time set by ${rule(r.dueBy)}`);
  if (r.assignedBy !== undefined) words.push(`assigned by ${rule(r.assignedBy)}`);
  return words;
}

function Steps({ run, rule }: { run: WorkflowRunDetail; rule: RuleNamer }) {
  return (
    <div class="panel">
      <h2>Steps</h2>
      {run.steps.length === 0 ? (
        <Empty>This run has no steps.</Empty>
      ) : (
        <table class="cards steps">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Status</th>
              <th scope="col">Assignee</th>
              <th scope="col">Due</th>
              <th scope="col">Started</th>
              <th scope="col">Completed or skipped</th>
              <th scope="col">Decided by rules</th>
            </tr>
          </thead>
          <tbody>
            {run.steps.map((s) => {
              const decided = stepRules(s, rule);
              return (
                <tr
                  key={s.name}
                  class={s.status === 'skipped' ? 'skipped' : undefined}
                  aria-current={s.status === 'active' ? 'step' : undefined}
                >
                  <td data-label="Step">{s.name}</td>
                  <td data-label="Status">
                    <StatusBadge status={s.status} />
                  </td>
                  <td data-label="Assignee">{s.assignee ?? <span class="muted">—</span>}</td>
                  <td data-label="Due">
                    <Time value={s.dueDate} />
                    {s.overdue && <span class="overdue"> · overdue</span>}
                  </td>
                  <td data-label="Started">
                    <Time value={s.startedAt} />
                  </td>
                  <td data-label="Completed or skipped">
                    {s.skippedAt ? (
                      <>
                        skipped <Time value={s.skippedAt} />
                      </>
                    ) : (
                      <Time value={s.completedAt} />
                    )}
                  </td>
                  <td data-label="Decided by rules">
                    {decided.length ? decided.join('; ') : <span class="muted">—</span>}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** The run's inputs: each value in words for its type, with where it came from. */
function Inputs({ run, pages }: { run: WorkflowRunDetail; pages: TemplatePage[] | undefined }) {
  const names = new Map<string, string>();
  const types = new Map<string, FieldType | undefined>();
  for (const f of run.fields ?? []) {
    names.set(f.inputId, f.fieldName);
    types.set(f.inputId, f.type);
  }
  for (const p of pages ?? []) {
    for (const f of p.inputFields) {
      names.set(f.inputId, f.fieldName);
      types.set(f.inputId, f.type);
    }
  }
  const enteredAt = new Map<string, RunHistoryEntry>();
  for (const e of run.history) {
    if (e.type !== 'step.completed') continue;
    const inputs = e.data.inputFields;
    if (inputs && typeof inputs === 'object')
      for (const k of Object.keys(inputs)) enteredAt.set(k, e);
  }
  const entries = Object.entries(run.inputFields);
  return (
    <div class="panel">
      <h2>Inputs</h2>
      {entries.length === 0 ? (
        <Empty>No values yet.</Empty>
      ) : (
        <table class="cards inputs">
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Value</th>
              <th scope="col">Given</th>
            </tr>
          </thead>
          <tbody>
            {entries.map(([inputId, value]) => {
              const at = enteredAt.get(inputId);
              const words = valueWords(types.get(inputId), value);
              return (
                <tr key={inputId}>
                  <td data-label="Field">
                    {names.get(inputId) ?? inputId} <code class="muted">{inputId}</code>
                  </td>
                  <td data-label="Value">
                    {value === '' ? (
                      <span class="muted">(blank)</span>
                    ) : words === value ? (
                      value
                    ) : (
                      <span title={value}>{words}</span>
                    )}
                  </td>
                  <td data-label="Given">
                    {at ? (
                      <>
                        at step {str(at.data.step)}, <Time value={at.at} />
                      </>
                    ) : (
                      <>
                        prefilled at creation, <Time value={run.createdAt} />
                      </>
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </div>
  );
}

const EVENT_WORDS: Record<EventType, string> = {
  'run.created': 'Created',
  'run.started': 'Started',
  'step.completed': 'Step completed',
  'step.approved': 'Approved',
  'step.rejected': 'Rejected',
  'step.reopened': 'Sent back',
  'step.assigned': 'Assignee changed',
  'step.escalated': 'Escalated',
  'step.skipped': 'Step skipped',
  'step.overdue': 'Step overdue',
  'run.completed': 'Completed',
  'run.failed': 'Failed',
  'run.cancelled': 'Cancelled',
  'run.retried': 'Retried',
  'run.migrated': 'Moved to another version',
  'run.deleted': 'Deleted',
};

const BAD = new Set<EventType>([
  'run.failed',
  'run.cancelled',
  'step.overdue',
  'step.rejected',
  'step.escalated',
]);

function History({ history, rule }: { history: RunHistoryEntry[]; rule: RuleNamer }) {
  return (
    <div class="panel">
      <h2>History</h2>
      {history.length === 0 ? (
        <Empty>No events yet.</Empty>
      ) : (
        <ol class="timeline">
          {history.map((e) => (
            <li
              key={e.seq}
              class={
                BAD.has(e.type)
                  ? `event bad ${e.type.replace('.', '-')}`
                  : `event ${e.type.replace('.', '-')}`
              }
            >
              <p class="event-head">
                {BAD.has(e.type) && (
                  <span class="mark" aria-hidden="true">
                    !
                  </span>
                )}
                <strong>{eventHead(e)}</strong> <code class="muted">{e.type}</code>
              </p>
              <p class="event-meta">
                <Time value={e.at} /> · by <ActorName actor={e.actor} />
              </p>
              <EventDetail entry={e} rule={rule} />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/** An event's title: its type in words ("Moved to version 3 from version 2" for a move). */
function eventHead(entry: RunHistoryEntry): string {
  const d = entry.data;
  if (
    entry.type === 'run.migrated' &&
    typeof d.toVersion === 'number' &&
    typeof d.fromVersion === 'number'
  ) {
    return `Moved to version ${d.toVersion} from version ${d.fromVersion}`;
  }
  return EVENT_WORDS[entry.type];
}

/** A string-to-string record in an event's data ({} when it is not one). */
function record(value: unknown): Array<[string, string]> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return [];
  return Object.entries(value).map(([k, v]) => [k, v === null ? 'none' : String(v)]);
}

/** A list of names in an event's data ([] when it is not one). */
function names(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

/** A rule's index in an event's data, when it has one. */
const indexOf = (value: unknown) => (typeof value === 'number' ? value : undefined);

function EventDetail({ entry, rule }: { entry: RunHistoryEntry; rule: RuleNamer }) {
  const d = entry.data;
  const parts: string[] = [];
  const step = str(d.step);
  /** "(by rule 2 (Big amounts))" when the event says a rule decided it. */
  const by = (value: unknown) => {
    const i = indexOf(value);
    return i === undefined ? '' : ` (by ${rule(i)})`;
  };
  let due = str(d.dueDate);
  let dueBy: unknown;
  switch (entry.type) {
    case 'run.started':
      if (step) parts.push(`step ${step}`);
      if (str(d.assignee)) parts.push(`assigned to ${str(d.assignee)}${by(d.assigneeByRule)}`);
      dueBy = d.dueByRule;
      break;
    case 'step.completed':
    case 'step.approved':
    case 'step.rejected': {
      if (step) parts.push(`step ${step}`);
      if (str(d.decidedBy)) parts.push(`decided by ${str(d.decidedBy)}`);
      if (str(d.completedBy)) parts.push(`done by ${str(d.completedBy)}`);
      if (d.timedOut === true) parts.push('nobody decided in time: decided by the timeout');
      if (str(d.comment)) parts.push(`comment: “${str(d.comment)}”`);
      if (typeof d.rejections === 'number') parts.push(`rejection ${d.rejections}`);
      if (d.outcome === 'failed') parts.push('the run fails');
      const inputs =
        d.inputFields && typeof d.inputFields === 'object' ? Object.entries(d.inputFields) : [];
      if (inputs.length)
        parts.push(`values: ${inputs.map(([k, v]) => `${k} = ${String(v)}`).join(', ')}`);
      if (str(d.nextStep)) {
        const shown = indexOf(d.nextShownByRule);
        parts.push(
          `next: ${str(d.nextStep)}${shown === undefined ? '' : ` (shown by ${rule(shown)})`}`,
        );
      }
      if (str(d.nextAssignee)) {
        parts.push(`assigned to ${str(d.nextAssignee)}${by(d.nextAssigneeByRule)}`);
      }
      due = str(d.nextDueDate);
      dueBy = d.nextDueByRule;
      break;
    }
    case 'step.skipped': {
      const i = indexOf(d.rule);
      const name = i === undefined ? 'a rule' : ruleLabel(i, str(d.ruleName) || undefined);
      parts.push(
        d.reason === 'not_shown'
          ? `step ${step} · not shown: ${name} did not apply`
          : `step ${step} · skipped by ${name}`,
      );
      break;
    }
    case 'step.overdue':
      if (step) parts.push(`step ${step} passed its due date`);
      break;
    case 'step.reopened': {
      const steps = Array.isArray(d.steps) ? d.steps.map(String) : [];
      parts.push(`back to ${step} after ${str(d.from)} was rejected`);
      if (steps.length) parts.push(`open again: ${steps.join(', ')}`);
      break;
    }
    case 'step.assigned': {
      const verb =
        d.change === 'claim' ? 'claimed' : d.change === 'unclaim' ? 'unclaimed' : 'assigned';
      parts.push(`step ${step} ${verb}`);
      if (str(d.previousAssignee)) parts.push(`from ${str(d.previousAssignee)}`);
      if (str(d.assignee)) parts.push(`to ${str(d.assignee)}`);
      break;
    }
    case 'step.escalated': {
      parts.push(`step ${step} overdue by ${String(d.overdueByHours)} h`);
      if (str(d.assignee)) parts.push(`given to ${str(d.assignee)}`);
      const groups = Array.isArray(d.addedCandidateGroups)
        ? d.addedCandidateGroups.map(String)
        : [];
      if (groups.length) parts.push(`groups added: ${groups.join(', ')}`);
      break;
    }
    case 'run.failed':
      if (str(d.error)) parts.push(`error: ${str(d.error)}`);
      if (step) parts.push(`at step ${step}`);
      break;
    case 'run.cancelled':
      parts.push(str(d.reason) ? `reason: “${str(d.reason)}”` : 'no reason given');
      if (step) parts.push(`at step ${step}`);
      break;
    case 'run.retried':
      if (str(d.change)) parts.push(`change: ${str(d.change)}`);
      if (step) parts.push(`step ${step}`);
      break;
    case 'run.migrated': {
      if (step) parts.push(`at step ${step}`);
      if (str(d.assignee)) parts.push(`assigned to ${str(d.assignee)}`);
      const renamed = record(d.pageMap).filter(([from, to]) => from !== to);
      if (renamed.length)
        parts.push(`pages: ${renamed.map(([from, to]) => `${from} became ${to}`).join(', ')}`);
      const left = names(d.unmappedPages);
      if (left.length) parts.push(`left behind: ${left.join(', ')}`);
      const incompatible = new Set(names(d.incompatibleFields));
      const dropped = record(d.droppedFields);
      if (dropped.length) {
        const values = dropped.map(
          ([k, v]) => `${k} = “${v}”${incompatible.has(k) ? ' (incompatible)' : ''}`,
        );
        parts.push(`dropped: ${values.join(', ')}`);
      }
      const defaulted = names(d.defaultedFields);
      if (defaulted.length) parts.push(`defaulted: ${defaulted.join(', ')}`);
      const skipped = names(d.skippedSteps);
      if (skipped.length) parts.push(`steps skipped: ${skipped.join(', ')}`);
      const unassigned = record(d.droppedAssignments);
      if (unassigned.length)
        parts.push(
          `assignments dropped: ${unassigned.map(([page, user]) => `${page} (${user})`).join(', ')}`,
        );
      break;
    }
    default:
      break;
  }
  if (!parts.length && !due) return null;
  return (
    <p class="event-detail">
      {parts.join(' · ')}
      {due && (
        <>
          {parts.length ? ' · ' : ''}due <Time value={due} />
          {by(dueBy)}
        </>
      )}
    </p>
  );
}

/** Who made a change, in words; a schedule (the runs it creates) links to it. */
function ActorName({ actor }: { actor: Actor | undefined }) {
  if (!actor) return <>unknown (recorded before actors were)</>;
  if (actor.type === 'api_key') return <>key {actor.name ?? actor.id}</>;
  if (actor.type === 'system') return <>the service</>;
  if (actor.type === 'schedule') {
    return (
      <>
        schedule{' '}
        <a href={href(`/schedules/${encodeURIComponent(actor.id)}`)}>
          <code>{actor.id}</code>
        </a>
      </>
    );
  }
  return <>an operator (admin CLI)</>;
}

function lastOf(history: RunHistoryEntry[], type: EventType): RunHistoryEntry | undefined {
  for (let i = history.length - 1; i >= 0; i--) if (history[i]!.type === type) return history[i];
  return undefined;
}

function str(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value && 'message' in value) return String(value.message);
  return '';
}
