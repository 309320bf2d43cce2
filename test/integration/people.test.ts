// People do the steps: approval pages (approve; reject back to an earlier page with the values
// kept; reject to fail; the rejection limit; the decision timeout, also with Redis flushed at
// the deadline and with the worker killed at it), claims (racing claims, override, unclaim,
// assign), and escalation exactly once with two workers. Every answer is checked against the
// spec and the served API document (test/support/http.ts).
import { Queue } from 'bullmq';
import { expect } from 'chai';
import { stepDueJob } from '../../src/jobs/step-due.js';
import { testEnv } from '../support/env.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { startPrivateRedis, type PrivateRedis } from '../support/private-redis.js';
import { testDb } from '../support/root-hooks.js';
import { sleep, waitFor } from '../support/wait.js';

type Event = { seq: number; type: string; data: Record<string, unknown>; actor?: { type: string } };
type Detail = {
  status: string;
  currentStepName?: string;
  currentStepAssignee?: string;
  inputFields: Record<string, string>;
  steps: Array<Record<string, unknown> & { name: string; status: string }>;
  history: Event[];
  error?: { message: string };
};

/** 0.0005 h = 1.8 s: a time a test can wait for. */
const SOON_HOURS = 0.0005;
const SOON_MS = SOON_HOURS * 3600_000;

const EXPENSE = {
  name: 'Expense claim',
  pages: [
    {
      name: 'Submit',
      inputFields: [
        { inputId: 'amount', fieldName: 'Amount', type: 'number', required: true },
        { inputId: 'payer', fieldName: 'Who pays' },
      ],
    },
    {
      name: 'Manager approval',
      kind: 'approval',
      onReject: { action: 'reopen', page: 'Submit' },
      maxRejections: 3,
      inputFields: [],
    },
    {
      name: 'Pay',
      candidateGroups: ['finance'],
      candidateUsersFromField: 'payer',
      inputFields: [],
    },
  ],
};

describe('people: approvals, claims and escalation @cluster', function () {
  this.timeout(90000);

  let redis: PrivateRedis;
  let api: ApiProcess;
  let workers: ServiceProcess[];
  let tenant: Tenant;
  let client: Client;
  let env: Record<string, string>;

  before(async () => {
    redis = await startPrivateRedis();
    // The reconciler waits long enough that, with Redis intact, the timers act first.
    env = { ...redis.env, RECONCILE_AFTER_MS: '4000' };
    [api, ...workers] = await Promise.all([startApi(env), startWorker(env), startWorker(env)]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    await Promise.all([api?.stop(), ...(workers ?? []).map((w) => w.stop())]);
    await redis?.stop();
  });

  const detail = async (id: string) => (await client.getRun(id)).body as unknown as Detail;

  async function template(definition: object): Promise<string> {
    const reply = await client.call<{ id: string; message?: string }>(
      '/create-workflow-template',
      definition,
    );
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.id;
  }

  async function runAt(templateId: string, step: string, inputs: Record<string, string> = {}) {
    const id = (await client.createRun({ workflow_template_id: templateId, input_fields: inputs }))
      .body.id as string;
    await waitFor(`run at ${step}`, async () => (await detail(id)).currentStepName === step);
    return id;
  }

  async function settled(id: string, check: (d: Detail) => boolean, what: string, ms = 15000) {
    return waitFor(
      what,
      async () => {
        const d = await detail(id);
        return check(d) ? d : undefined;
      },
      ms,
    );
  }

  const types = (d: Detail) => d.history.map((e) => e.type);

  describe('approval pages', () => {
    let expense: string;
    before(async () => {
      expense = await template(EXPENSE);
    });

    it('refuses approval settings that cannot hold, pointing at them', async () => {
      const cases: Array<[object, string]> = [
        [{ name: 'A', onReject: { action: 'fail' }, inputFields: [] }, '/pages/0/onReject'],
        [
          {
            name: 'A',
            kind: 'approval',
            onReject: { action: 'reopen', page: 'A' },
            inputFields: [],
          },
          '/pages/0/onReject/page',
        ],
        [
          { name: 'A', escalations: [{ overdueByHours: 1, assignTo: 'boss' }], inputFields: [] },
          '/pages/0/escalations',
        ],
        [
          { name: 'A', candidateUsersFromField: 'nope', inputFields: [] },
          '/pages/0/candidateUsersFromField',
        ],
      ];
      for (const [page, field] of cases) {
        const reply = await client.call<{ code: string; field: string }>(
          '/create-workflow-template',
          { name: 'Bad', pages: [page] },
        );
        expect(reply.status, JSON.stringify(page)).to.equal(400);
        expect(reply.body).to.include({ code: 'invalid_template_field', field });
      }
    });

    it('approves with a comment and the deciding user, and moves on', async () => {
      const id = await runAt(expense, 'Submit', { amount: '120' });
      await client.completeStep({ workflow_run_id: id, step_name: 'Submit', completed_by: 'ann' });
      await settled(id, (d) => d.currentStepName === 'Manager approval', 'approval current');
      const missing = await client.completeStep({ workflow_run_id: id });
      expect(missing.status).to.equal(400);
      expect(missing.body).to.include({ code: 'decision_required', field: '/decision' });
      const ok = await client.completeStep({
        workflow_run_id: id,
        step_name: 'Manager approval',
        decision: 'approved',
        comment: 'fine',
        completed_by: 'mia',
      });
      expect(ok.status).to.equal(202);
      const d = await settled(id, (x) => x.currentStepName === 'Pay', 'pay current');
      const submitted = d.history.find((e) => e.type === 'step.completed')!;
      expect(submitted.data).to.include({ step: 'Submit', completedBy: 'ann' });
      const approved = d.history.find((e) => e.type === 'step.approved')!;
      expect(approved.data).to.include({
        step: 'Manager approval',
        comment: 'fine',
        decidedBy: 'mia',
        nextStep: 'Pay',
      });
      expect(approved.actor?.type).to.equal('api_key');
      expect(d.steps[1]).to.include({
        kind: 'approval',
        status: 'completed',
        decision: 'approved',
        comment: 'fine',
        decidedBy: 'mia',
      });
      // The payment step is unclaimed, for the finance group.
      expect(d.currentStepAssignee).to.equal(undefined);
      expect(d.steps[2]).to.deep.include({ candidateGroups: ['finance'] });
      expect(d.steps[2]!.candidateUsers, 'no payer named').to.deep.equal([]);
      // A decision is refused where it does not belong.
      const stray = await client.completeStep({ workflow_run_id: id, decision: 'approved' });
      expect(stray.body).to.include({ code: 'decision_not_taken' });
    });

    it('sends a rejection back to the earlier page with the values kept, until approved', async () => {
      const id = await runAt(expense, 'Submit', { amount: '900' });
      await client.completeStep({ workflow_run_id: id, step_name: 'Submit' });
      await settled(id, (d) => d.currentStepName === 'Manager approval', 'approval current');
      await client.completeStep({
        workflow_run_id: id,
        step_name: 'Manager approval',
        decision: 'rejected',
        comment: 'too much',
        completed_by: 'mia',
      });
      const back = await settled(id, (d) => d.currentStepName === 'Submit', 'sent back');
      expect(back.status).to.equal('active');
      expect(back.inputFields.amount, 'the values given before are kept').to.equal('900');
      const rejected = back.history.find((e) => e.type === 'step.rejected')!;
      expect(rejected.data).to.include({
        step: 'Manager approval',
        outcome: 'reopened',
        rejections: 1,
        comment: 'too much',
        decidedBy: 'mia',
        nextStep: 'Submit',
      });
      const reopened = back.history.find((e) => e.type === 'step.reopened')!;
      expect(reopened.data).to.deep.equal({
        step: 'Submit',
        from: 'Manager approval',
        steps: ['Submit', 'Manager approval'],
      });
      expect(back.steps[0]).to.include({ status: 'active' });
      expect(back.steps[0]!.reopenedAt).to.be.a('string');
      expect(back.steps[1]).to.include({ status: 'waiting', rejections: 1 });
      // The value can be changed; then the approval comes again, and passes.
      await client.completeStep({ workflow_run_id: id, input_fields: { amount: '450' } });
      await settled(id, (d) => d.currentStepName === 'Manager approval', 'approval again');
      await client.completeStep({ workflow_run_id: id, decision: 'approved' });
      const done = await settled(id, (d) => d.currentStepName === 'Pay', 'approved');
      expect(done.inputFields.amount).to.equal('450');
      expect(types(done).filter((t) => t === 'step.approved')).to.have.length(1);
    });

    it('fails the run at the rejection limit, and a failed rejection is not retried', async () => {
      const id = await runAt(expense, 'Submit', { amount: '5' });
      for (let round = 1; round <= 3; round++) {
        await client.completeStep({ workflow_run_id: id, step_name: 'Submit' });
        await settled(id, (d) => d.currentStepName === 'Manager approval', `approval ${round}`);
        await client.completeStep({
          workflow_run_id: id,
          decision: 'rejected',
          comment: `no ${round}`,
        });
        if (round < 3) await settled(id, (d) => d.currentStepName === 'Submit', `back ${round}`);
      }
      const failed = await settled(id, (d) => d.status === 'failed', 'failed at the limit');
      expect(failed.error!.message).to.match(/rejected 3 times.*: no 3$/);
      const last = failed.history.filter((e) => e.type === 'step.rejected').at(-1)!;
      expect(last.data).to.include({ outcome: 'failed', rejections: 3 });
      expect(types(failed).at(-1)).to.equal('run.failed');
      const retry = await client.retryRun({ workflow_run_id: id });
      expect(retry.status).to.equal(409);
      expect(retry.body).to.include({ code: 'run_not_retryable' });
    });

    it('fails the run with the comment as its error when a rejection fails (the default)', async () => {
      const strict = await template({
        name: 'Strict',
        pages: [{ name: 'Decide', kind: 'approval', inputFields: [] }],
      });
      const id = await runAt(strict, 'Decide');
      await client.completeStep({ workflow_run_id: id, decision: 'rejected', comment: 'never' });
      const failed = await settled(id, (d) => d.status === 'failed', 'failed');
      expect(failed.error!.message).to.equal('never');
      expect(failed.currentStepName).to.equal(undefined);
      const list = await client.listRuns('?status=failed');
      expect(list.body.map((r) => r.id)).to.include(id);
    });
  });

  describe('rules on decisions', () => {
    it('lets a rejection go on where the page says so, and rules test the decision', async () => {
      const triage = await template({
        name: 'Triage',
        pages: [
          { name: 'Check', kind: 'approval', onReject: { action: 'continue' }, inputFields: [] },
          { name: 'Fix', inputFields: [] },
          { name: 'Ship', inputFields: [] },
        ],
        rules: [
          {
            name: 'rejected: fix first',
            when: { all: [{ field: 'decision:Check', op: 'equals', value: 'rejected' }] },
            then: [{ action: 'show_page', page: 'Fix' }],
          },
        ],
      });
      const approved = await runAt(triage, 'Check');
      const rejected = await runAt(triage, 'Check');
      await client.completeStep({ workflow_run_id: approved, decision: 'approved' });
      await client.completeStep({
        workflow_run_id: rejected,
        decision: 'rejected',
        comment: 'bug',
      });
      const a = await settled(approved, (d) => d.currentStepName === 'Ship', 'approved: ship');
      expect(a.steps[1]).to.include({ status: 'skipped' });
      const r = await settled(rejected, (d) => d.currentStepName === 'Fix', 'rejected: fix');
      expect(r.history.find((e) => e.type === 'step.rejected')!.data).to.include({
        outcome: 'continued',
        rejections: 1,
        comment: 'bug',
        nextStep: 'Fix',
        nextShownByRule: 0,
      });
      // A condition on a decision must come from an earlier approval page.
      const bad = await client.call<{ code: string; field: string }>('/create-workflow-template', {
        name: 'Bad',
        pages: [
          { name: 'A', inputFields: [] },
          { name: 'B', inputFields: [] },
        ],
        rules: [
          {
            when: { all: [{ field: 'decision:A', op: 'equals', value: 'approved' }] },
            then: [{ action: 'show_page', page: 'B' }],
          },
        ],
      });
      expect(bad.status).to.equal(400);
      expect(bad.body).to.include({ code: 'invalid_rule', field: '/rules/0/when/all/0/field' });
    });
  });

  describe('decision timeouts', () => {
    let timed: string;
    before(async () => {
      timed = await template({
        name: 'Timed approval',
        pages: [
          {
            name: 'Approve',
            kind: 'approval',
            decisionTimeout: { hours: SOON_HOURS, decision: 'approved' },
            inputFields: [],
          },
          { name: 'After', inputFields: [] },
        ],
      });
    });

    function timedOut(d: Detail) {
      const decided = d.history.filter((e) => e.type === 'step.approved');
      expect(decided, 'decided exactly once').to.have.length(1);
      expect(decided[0]!.data).to.include({ step: 'Approve', timedOut: true, nextStep: 'After' });
      expect(decided[0]!.actor).to.deep.include({ type: 'system' });
      expect(d.steps[0]).to.include({ decision: 'approved', status: 'completed' });
    }

    it('applies the default decision once nobody decided in time, as the system', async () => {
      const id = await runAt(timed, 'Approve');
      const d = await settled(
        id,
        (x) => x.currentStepName === 'After',
        'timed out',
        SOON_MS + 5000,
      );
      timedOut(d);
    });

    it('applies it once when Redis is flushed at the deadline: MySQL says what is owed', async () => {
      const id = await runAt(timed, 'Approve');
      const timers = new Queue(stepDueJob.queue, {
        connection: redis.connection(),
        prefix: testEnv.QUEUE_PREFIX,
      });
      try {
        await waitFor('the timer in Redis', async () => (await timers.getDelayedCount()) >= 1);
      } finally {
        await timers.close();
      }
      await sleep(Math.max(0, SOON_MS - 300));
      await redis.flushAll();
      const d = await settled(
        id,
        (x) => x.currentStepName === 'After',
        'reconciled',
        SOON_MS + 15000,
      );
      timedOut(d);
    });

    it('applies it once when the workers are killed at the deadline and others come up', async () => {
      const id = await runAt(timed, 'Approve');
      await sleep(Math.max(0, SOON_MS - 200));
      await Promise.all(workers.map((w) => w.stop('SIGKILL')));
      await sleep(1000);
      expect((await detail(id)).currentStepName, 'nobody applied it').to.equal('Approve');
      workers = await Promise.all([startWorker(env), startWorker(env)]);
      const d = await settled(id, (x) => x.currentStepName === 'After', 'after restart', 20000);
      timedOut(d);
    });

    it('leaves a decision made in time alone', async () => {
      const id = await runAt(timed, 'Approve');
      await client.completeStep({ workflow_run_id: id, decision: 'rejected', comment: 'no' });
      await settled(id, (x) => x.status === 'failed', 'rejected');
      await sleep(SOON_MS + 1000);
      const d = await detail(id);
      expect(d.history.filter((e) => e.type.startsWith('step.'))).to.have.length(1);
      expect(d.steps[0]).to.include({ decision: 'rejected' });
    });
  });

  describe('claims', () => {
    let queue: string;
    before(async () => {
      queue = await template(EXPENSE);
    });

    async function atPay(payer?: string): Promise<string> {
      const id = await runAt(queue, 'Submit', { amount: '10', ...(payer ? { payer } : {}) });
      await client.completeStep({ workflow_run_id: id });
      await settled(id, (d) => d.currentStepName === 'Manager approval', 'approval');
      await client.completeStep({ workflow_run_id: id, decision: 'approved' });
      await settled(id, (d) => d.currentStepName === 'Pay', 'pay');
      return id;
    }

    const claim = (id: string, user: string, extra: object = {}) =>
      client.call<{ code?: string }>('/claim-workflow-step', {
        workflow_run_id: id,
        step_name: 'Pay',
        user_id: user,
        ...extra,
      });

    it('takes candidate users from a field named in the template', async () => {
      const id = await atPay('  pat ');
      expect((await detail(id)).steps[2]).to.deep.include({
        candidateUsers: ['pat'],
        candidateGroups: ['finance'],
      });
    });

    it('lets exactly one of two racing claims win, every time', async () => {
      const ids = await Promise.all([1, 2, 3, 4, 5].map(() => atPay()));
      for (const id of ids) {
        const replies = await Promise.all([claim(id, 'fay'), claim(id, 'finn')]);
        const statuses = replies.map((r) => r.status).sort();
        expect(statuses, id).to.deep.equal([200, 409]);
        const lost = replies.find((r) => r.status === 409)!;
        expect(lost.body.code).to.equal('step_already_claimed');
        const winner = replies[0]!.status === 200 ? 'fay' : 'finn';
        const d = await detail(id);
        expect(d.currentStepAssignee).to.equal(winner);
        const assigned = d.history.filter((e) => e.type === 'step.assigned');
        expect(assigned).to.have.length(1);
        expect(assigned[0]!.data).to.deep.equal({ step: 'Pay', change: 'claim', assignee: winner });
        // The list's assignee filter sees it at once.
        const mine = await client.listRuns(`?assignee=${winner}`);
        expect(mine.body.map((r) => r.id)).to.include(id);
      }
    });

    it('overrides, unclaims and assigns, each a step.assigned event', async () => {
      const id = await atPay();
      expect((await claim(id, 'fay')).status).to.equal(200);
      expect((await claim(id, 'fay')).status, 'the holder again: nothing changes').to.equal(200);
      expect((await claim(id, 'finn', { allow_override: true })).status).to.equal(200);
      const notHeld = await client.call<{ code: string }>('/unclaim-workflow-step', {
        workflow_run_id: id,
        step_name: 'Pay',
        user_id: 'fay',
      });
      expect(notHeld.status).to.equal(409);
      expect(notHeld.body.code).to.equal('step_not_held');
      const unclaimed = await client.call('/unclaim-workflow-step', {
        workflow_run_id: id,
        step_name: 'Pay',
        user_id: 'finn',
      });
      expect(unclaimed.status).to.equal(200);
      expect((await detail(id)).currentStepAssignee).to.equal(undefined);
      const assigned = await client.call('/assign-workflow-step', {
        workflow_run_id: id,
        step_name: 'Pay',
        user_id: 'gus',
      });
      expect(assigned.status).to.equal(200);
      const d = await detail(id);
      expect(d.currentStepAssignee).to.equal('gus');
      expect(d.history.filter((e) => e.type === 'step.assigned').map((e) => e.data)).to.deep.equal([
        { step: 'Pay', change: 'claim', assignee: 'fay' },
        { step: 'Pay', change: 'claim', assignee: 'finn', previousAssignee: 'fay' },
        { step: 'Pay', change: 'unclaim', previousAssignee: 'finn' },
        { step: 'Pay', change: 'assign', assignee: 'gus' },
      ]);
      const wrongStep = await client.call<{ code: string }>('/claim-workflow-step', {
        workflow_run_id: id,
        step_name: 'Submit',
        user_id: 'fay',
      });
      expect(wrongStep.body.code).to.equal('step_not_current');
    });

    it("answers another organization's run as not found, and changes nothing", async () => {
      const id = await atPay();
      const other = await createTenant(testDb());
      const stranger = new Client(api.url, other.key);
      for (const path of [
        '/claim-workflow-step',
        '/unclaim-workflow-step',
        '/assign-workflow-step',
      ]) {
        const reply = await stranger.call<{ code: string }>(path, {
          workflow_run_id: id,
          step_name: 'Pay',
          user_id: 'mallory',
        });
        expect(reply.status, path).to.equal(404);
        expect(reply.body.code).to.equal('run_not_found');
      }
      expect(types(await detail(id))).not.to.include('step.assigned');
    });

    it('replays the answer of a claim sent again with its Idempotency-Key', async () => {
      const id = await atPay();
      const key = `claim-${id}`;
      const body = { workflow_run_id: id, step_name: 'Pay', user_id: 'fay' };
      const first = await client.call('/claim-workflow-step', body, { 'idempotency-key': key });
      await claim(id, 'finn', { allow_override: true });
      const again = await client.call('/claim-workflow-step', body, { 'idempotency-key': key });
      expect(again.status).to.equal(200);
      expect(again.text).to.equal(first.text);
      expect((await detail(id)).currentStepAssignee).to.equal('finn');
    });
  });

  describe('escalation', () => {
    it('escalates an overdue step exactly once, with two workers', async () => {
      const escalating = await template({
        name: 'Escalating',
        pages: [
          {
            name: 'Review',
            dueInHours: SOON_HOURS,
            candidateGroups: ['reviewers'],
            escalations: [
              { overdueByHours: SOON_HOURS, assignTo: 'boss', addCandidateGroups: ['managers'] },
            ],
            inputFields: [],
          },
        ],
      });
      const ids = await Promise.all([1, 2, 3].map(() => runAt(escalating, 'Review')));
      const escalated = [];
      for (const id of ids) {
        escalated.push(
          await settled(
            id,
            (x) => x.history.some((e) => e.type === 'step.escalated'),
            'escalated',
            2 * SOON_MS + 8000,
          ),
        );
      }
      // A second escalation, were one owed, would be written by now: by the timers, or by the
      // reconciler (RECONCILE_AFTER_MS 4 s) from MySQL.
      await sleep(5500);
      for (const [i, id] of ids.entries()) {
        const d = escalated[i]!;
        const after = await detail(id);
        expect(
          after.history.filter((e) => e.type === 'step.escalated'),
          id,
        ).to.have.length(1);
        expect(
          after.history.filter((e) => e.type === 'step.overdue'),
          id,
        ).to.have.length(1);
        const event = d.history.find((e) => e.type === 'step.escalated')!;
        expect(event.data).to.deep.equal({
          step: 'Review',
          escalation: 0,
          overdueByHours: SOON_HOURS,
          assignee: 'boss',
          addedCandidateGroups: ['managers'],
        });
        expect(event.actor).to.deep.include({ type: 'system' });
        expect(after.currentStepAssignee).to.equal('boss');
        expect(after.steps[0]).to.deep.include({
          candidateGroups: ['reviewers', 'managers'],
          escalations: 1,
        });
      }
    });
  });
});
