// A person's tasks (GET /get-tasks): the steps they hold ("Mine") and those they may claim ("I
// can claim": they are a candidate user, or one of their groups a candidate group). The user id
// and groups live in the URL's query (?user=, ?group= repeated), so a view can be bookmarked.
// Each task is claimed, unclaimed, completed, approved or rejected here; a step whose page
// requires fields is completed on the run's screen, which the refusal links to. The lists are
// read again as the organization's run events arrive (at most once a second).
import { useEffect, useRef, useState } from 'preact/hooks';
import type { GetTasksQuery, Page, Task } from 'workflow-run-client';
import { WorkflowRunError } from 'workflow-run-client';
import { messageOf } from '../api.js';
import { href, navigate, type Location } from '../router.js';
import { openStream, type StreamStatusValue } from '../stream.js';
import {
  ActionButton,
  confirmAction,
  Empty,
  ErrorBanner,
  Loading,
  LoadMore,
  ScreenHeader,
  StreamStatus,
  Time,
  useCan,
  useConsole,
  useLoad,
  useNotice,
  type Loaded,
} from '../ui.js';

const PAGE_SIZE = 50;

/** A task, with the id LoadMore keeps pages apart by (a run has one task at a time). */
type Row = Task & { id: string };

export function TasksScreen({ location }: { location: Location }) {
  const canRead = useCan('runs:read');
  if (!canRead) {
    return (
      <section>
        <ScreenHeader title="Tasks" />
        <p class="banner info">
          This key does not hold the <code>runs:read</code> scope, so it cannot list tasks. Sign in
          with a key that holds it to see them.
        </p>
      </section>
    );
  }
  return <TasksView location={location} />;
}

/** Group names, from inputs each of one or several comma-separated names. */
function groupsOf(texts: string[]): string[] {
  const names = texts.flatMap((t) => t.split(',')).map((g) => g.trim());
  return [...new Set(names.filter(Boolean))];
}

/** The user and groups the URL names (groups repeated, or comma-separated). */
function whoOf(query: URLSearchParams): { user: string; groups: string[] } {
  return { user: (query.get('user') ?? '').trim(), groups: groupsOf(query.getAll('group')) };
}

function searchOf(user: string, groups: string[]): URLSearchParams {
  const params = new URLSearchParams();
  if (user) params.set('user', user);
  for (const g of groups) params.append('group', g);
  return params;
}

const rowsOf = (page: Page<Task>): Page<Row> => ({
  ...page,
  items: page.items.map((t) => ({ ...t, id: t.runId })),
});

/** A task's visit of its step: a step reopened and begun again is another. */
const visitOf = (t: Task) => `${t.runId}\n${t.step}\n${t.startedAt}`;

function TasksView({ location }: { location: Location }) {
  const { api } = useConsole();
  const { user, groups } = whoOf(location.query);
  const key = searchOf(user, groups).toString();
  const mineQuery: GetTasksQuery = { assignee: user, limit: PAGE_SIZE };
  const claimQuery: GetTasksQuery = {
    claimable_by: user,
    group: groups.length ? groups : undefined,
    limit: PAGE_SIZE,
  };
  const none = () => Promise.resolve(undefined);
  const mine = useLoad<Page<Row> | undefined>(
    (a) => (user ? a.page('getTasks', mineQuery).then(rowsOf) : none()),
    [key],
  );
  const claimable = useLoad<Page<Row> | undefined>(
    (a) => (user ? a.page('getTasks', claimQuery).then(rowsOf) : none()),
    [key],
  );
  const stream = useTasksStream(() => {
    mine.reload();
    claimable.reload();
  });
  const [notice, say] = useNotice();
  const [problem, setProblem] = useState<{ task: Task; error: unknown } | null>(null);
  /** Decisions and completions sent, which a worker has yet to apply. */
  const [sent, setSent] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState('');
  useEffect(() => setProblem(null), [key]);

  const act = async (task: Task, what: () => Promise<unknown>, done: string, applied = true) => {
    setProblem(null);
    setBusy(visitOf(task));
    let refused = false;
    try {
      await what();
      say(done);
      if (!applied) setSent((s) => new Set(s).add(visitOf(task)));
    } catch (error) {
      refused = true;
      setProblem({ task, error });
    } finally {
      setBusy('');
    }
    // A claim is in the inbox at once, and a refusal (someone else was first) is shown as things
    // are now; a completion (202) shows when its worker's event arrives.
    if (applied || refused) {
      mine.reload();
      claimable.reload();
    }
  };

  const claim = (task: Task) =>
    act(
      task,
      () =>
        api.claimWorkflowStep({ workflow_run_id: task.runId, step_name: task.step, user_id: user }),
      `Claimed “${task.step}” of ${task.workflowName}.`,
    );
  const unclaim = (task: Task) =>
    act(
      task,
      () =>
        api.unclaimWorkflowStep({
          workflow_run_id: task.runId,
          step_name: task.step,
          user_id: user,
        }),
      `Left “${task.step}” of ${task.workflowName} to its candidates.`,
    );
  const complete = async (task: Task) => {
    const answer = await confirmAction({
      title: `Complete “${task.step}”?`,
      body: (
        <p>
          The step of <strong>{task.workflowName}</strong> is completed with no new values, by{' '}
          {user}. A step whose fields are required is completed on the run's page.
        </p>
      ),
      confirm: 'Complete step',
    });
    if (!answer) return;
    await act(
      task,
      () =>
        api.completeWorkflowStep({
          workflow_run_id: task.runId,
          step_name: task.step,
          completed_by: user,
        }),
      'Completion sent: a worker applies it.',
      false,
    );
  };
  const decide = async (task: Task, decision: 'approved' | 'rejected') => {
    const approve = decision === 'approved';
    const answer = await confirmAction({
      title: `${approve ? 'Approve' : 'Reject'} “${task.step}”?`,
      body: (
        <p>
          {approve
            ? `${task.workflowName} goes on to its next step.`
            : `${task.workflowName} is sent back or fails, as its template says.`}{' '}
          The decision is recorded as {user}'s.
        </p>
      ),
      confirm: approve ? 'Approve' : 'Reject',
      danger: !approve,
      reason: { label: 'Comment (optional)', maxLength: 4000 },
    });
    if (!answer) return;
    await act(
      task,
      () =>
        api.completeWorkflowStep({
          workflow_run_id: task.runId,
          step_name: task.step,
          decision,
          completed_by: user,
          ...(answer.reason ? { comment: answer.reason } : {}),
        }),
      `${approve ? 'Approval' : 'Rejection'} sent: a worker applies it.`,
      false,
    );
  };

  const actions = { busy, sent, claim, unclaim, complete, decide };
  return (
    <section class="tasks-screen">
      <ScreenHeader title="Tasks">
        <StreamStatus stream={stream} />
      </ScreenHeader>
      <WhoForm
        key={key}
        user={user}
        groups={groups}
        onChange={(u, g) => navigate('/tasks', searchOf(u, g))}
      />
      {notice}
      {problem && <Problem task={problem.task} error={problem.error} />}
      {!user ? (
        <p class="banner info">
          Enter a user id (and the groups the user is in) to see the user's tasks.
        </p>
      ) : (
        <>
          <TaskList
            id="mine"
            title="Mine"
            label={`Tasks held by ${user}`}
            empty={`${user} holds no task.`}
            list={mine}
            more={(cursor) => api.page('getTasks', { ...mineQuery, cursor }).then(rowsOf)}
            actions={actions}
          />
          <TaskList
            id="claimable"
            title="I can claim"
            label={`Tasks ${user} can claim`}
            empty="No unclaimed task names this user or these groups."
            list={claimable}
            more={(cursor) => api.page('getTasks', { ...claimQuery, cursor }).then(rowsOf)}
            actions={actions}
          />
        </>
      )}
    </section>
  );
}

function WhoForm({
  user,
  groups,
  onChange,
}: {
  user: string;
  groups: string[];
  onChange(user: string, groups: string[]): void;
}) {
  const [draftUser, setUser] = useState(user);
  const [draftGroups, setGroups] = useState(groups.join(', '));
  return (
    <form
      class="panel tasks-who"
      aria-label="Whose tasks"
      onSubmit={(event) => {
        event.preventDefault();
        onChange(draftUser.trim(), groupsOf([draftGroups]));
      }}
    >
      <div class="filters">
        <label class="field" for="tasks-user">
          <span>User id</span>
          <input
            id="tasks-user"
            value={draftUser}
            autoComplete="off"
            onInput={(event) => setUser(event.currentTarget.value)}
          />
        </label>
        <label class="field" for="tasks-groups">
          <span>Groups (comma-separated)</span>
          <input
            id="tasks-groups"
            value={draftGroups}
            autoComplete="off"
            placeholder="finance, team-leads"
            onInput={(event) => setGroups(event.currentTarget.value)}
          />
        </label>
        <div class="buttons">
          <button type="submit" class="primary">
            Show tasks
          </button>
        </div>
      </div>
    </form>
  );
}

/** An action's refusal: the API's words, and where to go on when the run's page is the way. */
function Problem({ task, error }: { task: Task; error: unknown }) {
  const code = error instanceof WorkflowRunError ? error.code : undefined;
  return (
    <div class="banner error" role="alert">
      <strong>
        “{task.step}” of {task.workflowName}:{' '}
      </strong>
      {messageOf(error)}
      {code === 'missing_required_field' && (
        <>
          {' '}
          <a href={href(`/runs/${encodeURIComponent(task.runId)}`)}>
            Fill in the step's fields on the run's page
          </a>
          .
        </>
      )}
      {code === 'step_already_claimed' && ' The lists show who holds what now.'}
    </div>
  );
}

interface Actions {
  busy: string;
  sent: ReadonlySet<string>;
  claim(task: Task): Promise<void>;
  unclaim(task: Task): Promise<void>;
  complete(task: Task): Promise<void>;
  decide(task: Task, decision: 'approved' | 'rejected'): Promise<void>;
}

function TaskList({
  id,
  title,
  label,
  empty,
  list,
  more,
  actions,
}: {
  id: string;
  title: string;
  label: string;
  empty: string;
  list: Loaded<Page<Row> | undefined>;
  more(cursor: string): Promise<Page<Row>>;
  actions: Actions;
}) {
  const data = list.data;
  return (
    <section class="panel" aria-labelledby={`tasks-${id}`}>
      <h2 id={`tasks-${id}`}>
        {title}
        {data && (
          <span class="muted">
            {' '}
            ({data.items.length}
            {data.nextCursor ? '+' : ''})
          </span>
        )}
      </h2>
      {list.error ? <ErrorBanner error={list.error} title="The tasks could not be read" /> : null}
      {!data ? (
        list.error ? null : (
          <Loading what="tasks" />
        )
      ) : data.items.length === 0 ? (
        <Empty>{empty}</Empty>
      ) : (
        <table class="cards task-list" aria-label={label} aria-busy={list.loading}>
          <thead>
            <tr>
              <th scope="col">Workflow</th>
              <th scope="col">Step</th>
              <th scope="col">Due</th>
              <th scope="col">Candidates</th>
              <th scope="col">Started</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {data.items.map((task) => (
              <tr key={task.runId} data-run-id={task.runId}>
                <td data-label="Workflow">
                  <a href={href(`/runs/${encodeURIComponent(task.runId)}`)}>{task.workflowName}</a>
                </td>
                <td data-label="Step">
                  {task.step}
                  {task.kind === 'approval' && <span class="badge approval">approval</span>}
                </td>
                <td data-label="Due">
                  <Time value={task.dueDate} />
                  {task.overdue && <span class="overdue"> overdue</span>}
                </td>
                <td data-label="Candidates">
                  <Candidates task={task} />
                </td>
                <td data-label="Started">
                  <Time value={task.startedAt} />
                </td>
                <td data-label="Actions">
                  <TaskActions task={task} mine={id === 'mine'} actions={actions} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && <LoadMore list={list as Loaded<Page<Row>>} fetch={more} />}
    </section>
  );
}

function Candidates({ task }: { task: Task }) {
  const { candidateGroups: groups, candidateUsers: users } = task;
  if (!groups.length && !users.length) return <span class="muted">—</span>;
  return (
    <>
      {groups.length > 0 && <span>groups: {groups.join(', ')}</span>}
      {groups.length > 0 && users.length > 0 && <br />}
      {users.length > 0 && <span>users: {users.join(', ')}</span>}
    </>
  );
}

type Button = readonly [name: string, className: string, run: () => Promise<void>];

/** A task's buttons: Claim for one to claim; for one held, its decision or Complete, and Unclaim. */
function TaskActions({ task, mine, actions }: { task: Task; mine: boolean; actions: Actions }) {
  const visit = visitOf(task);
  if (actions.sent.has(visit)) return <span class="muted">Sent: a worker applies it…</span>;
  const buttons: Button[] = !mine
    ? [['Claim', 'primary', () => actions.claim(task)]]
    : [
        ...(task.kind === 'approval'
          ? [
              ['Approve', 'primary', () => actions.decide(task, 'approved')] as const,
              ['Reject', 'danger', () => actions.decide(task, 'rejected')] as const,
            ]
          : [['Complete', 'primary', () => actions.complete(task)] as const]),
        ['Unclaim', '', () => actions.unclaim(task)],
      ];
  return (
    <div class="row-actions">
      {buttons.map(([name, className, run]) => (
        <ActionButton
          key={name}
          scope="runs:write"
          class={className || undefined}
          disabled={actions.busy === visit}
          aria-label={`${name} “${task.step}” of ${task.workflowName}`}
          onClick={() => void run()}
        >
          {name}
        </ActionButton>
      ))}
    </div>
  );
}

/**
 * Follows the organization's run events: each run.* or step.* event reads the lists again, at
 * most once a second however many come; so does a reconnection (what passed meanwhile).
 */
function useTasksStream(refresh: () => void): StreamStatusValue {
  const { api } = useConsole();
  const [state, setState] = useState<StreamStatusValue>({
    state: 'connecting',
  });
  const now = useRef(refresh);
  now.current = refresh;
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    let dropped = false;
    const soon = () => {
      if (timer) return;
      timer = setTimeout(() => {
        timer = undefined;
        if (!closed) now.current();
      }, 1000);
    };
    const close = openStream(
      api,
      {},
      {
        onEvent: (event) => {
          if (event.type.startsWith('run.') || event.type.startsWith('step.')) soon();
        },
        onState: (connected) => {
          setState({ state: connected ? 'live' : 'reconnecting' });
          if (!connected) dropped = true;
          else if (dropped) soon();
        },
        onEnd: (error) => setState({ state: 'ended', error }),
      },
    );
    return () => {
      closed = true;
      clearTimeout(timer);
      close();
    };
  }, [api]);
  return state;
}
