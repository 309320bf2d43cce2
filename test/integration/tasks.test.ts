// The task inbox (GET /get-tasks): every active run's current step, filtered by assignee,
// claimable_by (with groups), unassigned, overdue, due dates, template, kind and label, ordered
// by due date or by start, in keyset pages that neither skip nor repeat a task while other
// tasks change; and never another organization's. Every answer is checked against the served
// API document (test/support/http.ts).
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client, nextLink } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

interface Task {
  runId: string;
  workflowName: string;
  templateId: string;
  step: string;
  kind: 'step' | 'approval';
  assignee?: string;
  candidateUsers: string[];
  candidateGroups: string[];
  dueDate?: string;
  overdue: boolean;
  startedAt: string;
  labels: Record<string, string>;
}

const HOUR = 3600_000;

/** Two templates: a queue step for groups and users, and an approval with a due time. */
const QUEUE = {
  name: 'Queue',
  pages: [
    {
      name: 'Handle',
      candidateGroups: ['finance', 'ops'],
      candidateUsersFromField: 'helper',
      inputFields: [{ inputId: 'helper', fieldName: 'Helper' }],
    },
    { name: 'Close', inputFields: [] },
  ],
};
const REVIEW = {
  name: 'Review',
  pages: [{ name: 'Decide', kind: 'approval', dueInHours: 48, inputFields: [] }],
};

describe('the task inbox: GET /get-tasks', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let client: Client;
  let queue: string;
  let review: string;
  let queueSoon: string;

  before(async () => {
    [api, worker] = await Promise.all([startApi(), startWorker()]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
    queue = await template(client, QUEUE);
    review = await template(client, REVIEW);
    // The same queue, its step due at once (in 1 s): overdue without a test reaching into MySQL.
    queueSoon = await template(client, {
      ...QUEUE,
      name: 'Queue soon',
      pages: [{ ...QUEUE.pages[0], dueInHours: 0.0003 }, QUEUE.pages[1]],
    });
  });

  after(async () => {
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function template(c: Client, definition: object): Promise<string> {
    const reply = await c.call<{ id: string }>('/create-workflow-template', definition);
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.id;
  }

  async function started(c: Client, body: Record<string, unknown>): Promise<string> {
    const id = (await c.createRun(body)).body.id as string;
    await waitFor('run to start', async () => (await c.getRun(id)).body.status === 'active');
    return id;
  }

  async function tasks(query: string, c: Client = client): Promise<Task[]> {
    const reply = await c.call<Task[]>(`/get-tasks${query}`);
    expect(reply.status, reply.text).to.equal(200);
    return reply.body;
  }

  /** Every page of a query, following Link rel=next. */
  async function allPages(query: string, c: Client = client): Promise<Task[]> {
    const out: Task[] = [];
    let path: string | undefined = `/get-tasks${query}`;
    while (path) {
      const reply: Awaited<ReturnType<typeof c.call<Task[]>>> = await c.call<Task[]>(path);
      expect(reply.status, reply.text).to.equal(200);
      out.push(...reply.body);
      path = nextLink(reply.headers);
    }
    return out;
  }

  const ids = (list: Task[]) => list.map((t) => t.runId);

  describe('filters', () => {
    let alice: string; // queue, assigned to alice
    let open: string; // queue, unclaimed, helper pat
    let approval: string; // review, due in 48 h, labelled
    let overdue: string; // queue, unclaimed, overdue (set below)

    before(async () => {
      alice = await started(client, {
        workflow_template_id: queue,
        input_fields: {},
        user_assignments: { Handle: 'alice' },
      });
      open = await started(client, {
        workflow_template_id: queue,
        input_fields: { helper: 'pat' },
      });
      approval = await started(client, {
        workflow_template_id: review,
        input_fields: {},
        labels: { team: 'blue' },
      });
      overdue = await started(client, { workflow_template_id: queueSoon, input_fields: {} });
      await waitFor('the step to be overdue', async () => {
        const steps = (await client.getRun(overdue)).body.steps as Array<{ overdue: boolean }>;
        return steps[0]!.overdue;
      });
    });

    it('lists every active run once, by due date with undated tasks last, then by start', async () => {
      const all = await tasks('');
      expect(ids(all)).to.have.members([alice, open, approval, overdue]);
      expect(ids(all).slice(0, 2)).to.deep.equal([overdue, approval]);
      const task = all.find((t) => t.runId === approval)!;
      expect(task).to.deep.include({
        workflowName: 'Review',
        templateId: review,
        step: 'Decide',
        kind: 'approval',
        candidateUsers: [],
        candidateGroups: [],
        overdue: false,
        labels: { team: 'blue' },
      });
      expect(task.dueDate).to.be.a('string');
      expect(task.assignee).to.equal(undefined);
      const byStart = await tasks('?order=started');
      expect(ids(byStart)).to.deep.equal([alice, open, approval, overdue]);
    });

    it('filters by assignee, unassigned, claimable_by and its groups', async () => {
      expect(ids(await tasks('?assignee=alice'))).to.deep.equal([alice]);
      expect(ids(await tasks('?unassigned=true'))).to.have.members([open, approval, overdue]);
      expect(ids(await tasks('?unassigned=false'))).to.deep.equal([alice]);
      // pat is a candidate user of one; finance a candidate group of every unclaimed queue task.
      expect(ids(await tasks('?claimable_by=pat'))).to.deep.equal([open]);
      expect(ids(await tasks('?claimable_by=pat&group=finance'))).to.have.members([open, overdue]);
      expect(ids(await tasks('?claimable_by=zed&group=legal'))).to.deep.equal([]);
      const claimable = await tasks('?claimable_by=pat&group=ops&order=started');
      expect(ids(claimable)).to.deep.equal([open, overdue]);
      expect(claimable[0]!.candidateUsers).to.deep.equal(['pat']);
      expect(claimable[0]!.candidateGroups).to.deep.equal(['finance', 'ops']);
    });

    it('filters by overdue, due dates, template, kind and label, combined', async () => {
      expect(ids(await tasks('?overdue=true'))).to.deep.equal([overdue]);
      expect(ids(await tasks('?overdue=false'))).to.have.members([alice, open, approval]);
      const now = new Date().toISOString();
      expect(ids(await tasks(`?due_before=${now}`))).to.deep.equal([overdue]);
      expect(ids(await tasks(`?due_after=${now}`))).to.deep.equal([approval]);
      expect(ids(await tasks(`?template_id=${review}`))).to.deep.equal([approval]);
      expect(ids(await tasks('?kind=approval'))).to.deep.equal([approval]);
      expect(ids(await tasks('?kind=step'))).to.have.members([alice, open, overdue]);
      expect(ids(await tasks('?label=team:blue'))).to.deep.equal([approval]);
      expect(ids(await tasks('?label=team:red'))).to.deep.equal([]);
      expect(
        ids(await tasks(`?kind=approval&unassigned=true&template_id=${review}`)),
      ).to.deep.equal([approval]);
      expect(ids(await tasks('?overdue=true&group=finance&claimable_by=x'))).to.deep.equal([
        overdue,
      ]);
      expect(ids(await tasks('?assignee=alice&overdue=true'))).to.deep.equal([]);
    });

    it('sees a claim at once: the task leaves "I can claim" and joins "Mine"', async () => {
      const claimed = await started(client, { workflow_template_id: queue, input_fields: {} });
      expect(ids(await tasks('?claimable_by=kim&group=ops'))).to.include(claimed);
      const reply = await client.call('/claim-workflow-step', {
        workflow_run_id: claimed,
        step_name: 'Handle',
        user_id: 'kim',
      });
      expect(reply.status).to.equal(200);
      expect(ids(await tasks('?claimable_by=kim&group=ops'))).not.to.include(claimed);
      expect(ids(await tasks('?assignee=kim'))).to.deep.equal([claimed]);
      await client.call('/unclaim-workflow-step', {
        workflow_run_id: claimed,
        step_name: 'Handle',
      });
      expect(ids(await tasks('?claimable_by=kim&group=ops'))).to.include(claimed);
      // Completed: its next step (no candidates) is the run's task now.
      await client.completeStep({ workflow_run_id: claimed, step_name: 'Handle' });
      await waitFor('next step', async () =>
        (await tasks('')).some((t) => t.runId === claimed && t.step === 'Close'),
      );
      expect(ids(await tasks('?claimable_by=kim&group=ops'))).not.to.include(claimed);
      // Cancelled: no task.
      await client.cancelRun({ workflow_run_id: claimed });
      expect(ids(await tasks(''))).not.to.include(claimed);
    });

    it('refuses a group without claimable_by, and a cursor of the other order', async () => {
      const bad = await client.call<{ code: string; field: string }>('/get-tasks?group=ops');
      expect(bad.status).to.equal(400);
      expect(bad.body).to.include({ code: 'invalid_query', field: '/group' });
      const first = await client.call<Task[]>('/get-tasks?limit=1');
      const cursor = new URLSearchParams(nextLink(first.headers)!.split('?')[1]).get('cursor')!;
      const other = await client.call<{ code: string }>(
        `/get-tasks?order=started&cursor=${cursor}`,
      );
      expect(other.status).to.equal(400);
      expect(other.body.code).to.equal('invalid_cursor');
    });

    it("never shows another organization's tasks, whatever the filter", async () => {
      const other = await createTenant(testDb());
      const stranger = new Client(api.url, other.key);
      const queries = [
        '',
        '?order=started',
        '?assignee=alice',
        '?unassigned=true',
        '?claimable_by=pat&group=finance&group=ops',
        '?overdue=true',
        `?template_id=${queue}`,
        '?kind=approval',
        '?label=team:blue',
        `?due_before=${new Date(Date.now() + 100 * HOUR).toISOString()}`,
      ];
      for (const query of queries) {
        expect(await tasks(query, stranger), query).to.deep.equal([]);
      }
    });
  });

  describe('pages', () => {
    it('neither skip nor repeat a task while other tasks are claimed, completed and made', async () => {
      const org = await createTenant(testDb());
      const c = new Client(api.url, org.key);
      const pages = await template(c, QUEUE);
      const made: string[] = [];
      for (let i = 0; i < 24; i++) {
        made.push(await started(c, { workflow_template_id: pages, input_fields: {} }));
      }
      // Half are left alone; the others change while the pages are read.
      const untouched = made.filter((_, i) => i % 2 === 0);
      const touched = made.filter((_, i) => i % 2 === 1);
      let stop = false;
      const churn = (async () => {
        let i = 0;
        while (!stop) {
          const id = touched[i % touched.length]!;
          const round = Math.floor(i / touched.length);
          if (round === 0) {
            await c.call('/claim-workflow-step', {
              workflow_run_id: id,
              step_name: 'Handle',
              user_id: 'u',
            });
          } else if (round === 1) {
            await c.completeStep({ workflow_run_id: id, step_name: 'Handle' });
          } else {
            await c.createRun({ workflow_template_id: pages, input_fields: {} });
          }
          i++;
        }
      })();
      const seen: Task[] = [];
      for (const query of [
        '?limit=3',
        '?limit=3&order=started',
        '?limit=2&claimable_by=x&group=ops',
      ]) {
        seen.length = 0;
        seen.push(...(await allPages(query, c)));
        const keys = seen.map((t) => `${t.runId}/${t.step}`);
        expect(new Set(keys).size, `${query}: no task twice`).to.equal(keys.length);
        const got = new Set(ids(seen));
        const expected = query.includes('claimable_by') ? untouched : untouched;
        for (const id of expected) expect(got.has(id), `${query}: ${id} listed`).to.equal(true);
        const starts = seen.map((t) => t.startedAt);
        if (query.includes('order=started')) expect(starts).to.deep.equal([...starts].sort());
      }
      stop = true;
      await churn;
    });
  });
});
