// Templates that carry the process's logic, through the service: typed fields checked at create
// and at completion; rules that skip and show pages as values come in, with step.skipped events
// on the history and the live stream; due times counted in business days from a date field in
// the organization's time zone; assignees from a field; refusals of unsound templates naming
// the part at fault, with nothing saved; and templates without any of it answering as before.
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { SseClient } from '../support/sse.js';
import { waitFor } from '../support/wait.js';
import type { TemplateDefinition } from '../../src/templates/definition/definition-types.js';

type Json = Record<string, unknown>;
interface Step {
  name: string;
  status: string;
  assignee?: string;
  dueDate?: string;
  skippedAt?: string;
  rules?: Record<string, number>;
}
interface Detail {
  status: string;
  currentStepName?: string;
  steps: Step[];
  fields?: Array<{ inputId: string; type: string; value?: string; page: string }>;
  history: Array<{ type: string; data: Json }>;
}

/** The worked example of docs/templates.md: an order approval. */
export const ORDER_APPROVAL: TemplateDefinition = {
  name: 'Order approval',
  pages: [
    {
      name: 'Order',
      inputFields: [
        { inputId: 'amount', fieldName: 'Amount', type: 'number', min: 0, required: true },
        { inputId: 'submitted_on', fieldName: 'Submitted on', type: 'date', required: true },
        { inputId: 'manager', fieldName: 'Manager', type: 'email' },
      ],
    },
    {
      name: 'Finance review',
      inputFields: [
        { inputId: 'approved', fieldName: 'Approved', type: 'checkbox', required: true },
      ],
    },
    { name: 'Ship', inputFields: [] },
  ],
  rules: [
    {
      name: 'large order',
      when: { all: [{ field: 'amount', op: 'gt', value: '10000' }] },
      then: [
        { action: 'show_page', page: 'Finance review' },
        {
          action: 'set_due',
          page: 'Finance review',
          due: { anchor: 'field', field: 'submitted_on', amount: 2, unit: 'business_days' },
        },
        { action: 'assign', page: 'Finance review', fromField: 'manager' },
      ],
    },
  ],
};

describe('templates with typed fields and rules', function () {
  this.timeout(60000);

  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;
  let client: Client;
  const streams: SseClient[] = [];

  before(async () => {
    [api, worker] = await Promise.all([startApi(), startWorker()]);
    tenant = await createTenant(testDb());
    client = new Client(api.url, tenant.key);
  });

  after(async () => {
    for (const s of streams) s.close();
    await Promise.all([api?.stop(), worker?.stop()]);
  });

  async function template(definition: TemplateDefinition): Promise<string> {
    const reply = await client.call<Json>('/create-workflow-template', definition);
    expect(reply.status, reply.text).to.equal(200);
    return reply.body.id as string;
  }

  const detail = async (id: string) => (await client.getRun(id)).body as unknown as Detail;

  async function run(templateId: string, inputs: Json = {}, extra: Json = {}): Promise<string> {
    const reply = await client.createRun({
      workflow_template_id: templateId,
      input_fields: inputs,
      ...extra,
    });
    expect(reply.status, reply.text).to.equal(200);
    const id = reply.body.id as string;
    await waitFor('run started', async () => (await detail(id)).status === 'active');
    return id;
  }

  async function complete(id: string, step: string, inputs: Json = {}): Promise<Detail> {
    const before = (await detail(id)).history.length;
    const reply = await client.completeStep({
      workflow_run_id: id,
      step_name: step,
      input_fields: inputs,
    });
    expect(reply.status, reply.text).to.equal(202);
    return waitFor('completion applied', async () => {
      const d = await detail(id);
      return d.history.length > before && d.currentStepName !== step ? d : undefined;
    });
  }

  async function runCount(): Promise<number> {
    const [row] = await testDb()('workflow_runs')
      .where({ organization_id: tenant.orgId })
      .count({ n: '*' });
    return Number(row!.n);
  }

  describe('typed fields', () => {
    let typed: string;
    before(async () => {
      typed = await template({
        name: 'Every type',
        pages: [
          {
            name: 'All',
            inputFields: [
              { inputId: 'n', fieldName: 'N', type: 'number', min: 1, max: 100, integer: true },
              { inputId: 'mail', fieldName: 'Mail', type: 'email' },
              { inputId: 'site', fieldName: 'Site', type: 'url' },
              { inputId: 'day', fieldName: 'Day', type: 'date' },
              { inputId: 'at', fieldName: 'At', type: 'datetime' },
              { inputId: 'one', fieldName: 'One', type: 'select', options: ['a', 'b'] },
              { inputId: 'many', fieldName: 'Many', type: 'multi_select', options: ['x', 'y,z'] },
              { inputId: 'ok', fieldName: 'OK', type: 'checkbox', required: true },
              { inputId: 'code', fieldName: 'Code', pattern: '[A-Z]{3}-[0-9]+', maxLength: 10 },
              { inputId: 'note', fieldName: 'Note', type: 'long_text', default: 'none' },
            ],
          },
          { name: 'After', inputFields: [] },
        ],
      });
    });

    it('takes each type in its string form at create, and shows each field with its type', async () => {
      const values = {
        n: '42',
        mail: 'ada@example.com',
        site: 'https://example.com/x',
        day: '2028-02-29',
        at: '2026-03-29T09:30:00+02:00',
        one: 'b',
        many: '["y,z","x"]',
        code: 'ABC-12',
      };
      const id = await run(typed, values);
      const d = await detail(id);
      const byId = new Map(d.fields!.map((f) => [f.inputId, f]));
      expect(byId.get('n')).to.deep.equal({
        inputId: 'n',
        fieldName: 'N',
        page: 'All',
        type: 'number',
        value: '42',
      });
      expect(byId.get('many')!.type).to.equal('multi_select');
      expect(byId.get('ok')).not.to.have.property('value');
      // A default fills a field the run was not given.
      expect(byId.get('note')!.value).to.equal('none');
    });

    const refusals: Array<[string, string, RegExp]> = [
      ['n', '42.5', /whole/],
      ['n', '101', /maximum 100/],
      ['n', '4e2', /not a number/],
      ['mail', 'ada', /email/],
      ['site', 'ftp://example.com', /http/],
      ['day', '2026-02-29', /date/],
      ['at', '2026-03-29T09:30:00', /offset|datetime|RFC/i],
      ['one', 'c', /options/],
      ['many', 'x,y', /JSON|array/i],
      ['many', '["x","x"]', /twice/],
      ['ok', 'yes', /true|false/],
      ['code', 'abc-12', /pattern/],
    ];
    for (const [field, value, why] of refusals) {
      it(`refuses ${field} = ${JSON.stringify(value)} at create with 400 invalid_field_value, storing nothing`, async () => {
        const before = await runCount();
        const reply = await client.createRun({
          workflow_template_id: typed,
          input_fields: { [field]: value },
        });
        expect(reply.status, reply.text).to.equal(400);
        expect(reply.body).to.include({
          code: 'invalid_field_value',
          field: `/input_fields/${field}`,
        });
        expect((reply.body as Json).message).to.match(why);
        expect(await runCount()).to.equal(before);
      });
    }

    it('checks values and required fields at completion; a required checkbox must be ticked', async () => {
      const id = await run(typed, {});
      const refused = await client.completeStep({
        workflow_run_id: id,
        input_fields: { ok: 'true', n: '0' },
      });
      expect(refused.status).to.equal(400);
      expect(refused.body).to.include({ code: 'invalid_field_value', field: '/input_fields/n' });
      const unticked = await client.completeStep({
        workflow_run_id: id,
        input_fields: { ok: 'false' },
      });
      expect(unticked.status).to.equal(400);
      expect(unticked.body).to.include({
        code: 'missing_required_field',
        field: '/input_fields/ok',
      });
      expect((await detail(id)).currentStepName).to.equal('All');
      const d = await complete(id, 'All', { ok: 'true', n: '7' });
      expect(d.currentStepName).to.equal('After');
    });

    it('refuses a pathological pattern nothing, and matches a long value against it at once', async () => {
      const id = await template({
        name: 'Backtracking',
        pages: [{ name: 'P', inputFields: [{ inputId: 'v', fieldName: 'V', pattern: '(a+)+$' }] }],
      });
      const started = Date.now();
      const reply = await client.createRun({
        workflow_template_id: id,
        input_fields: { v: `${'a'.repeat(9000)}!` },
      });
      expect(reply.status).to.equal(400);
      expect(reply.body).to.include({ code: 'invalid_field_value', field: '/input_fields/v' });
      // A backtracking engine would take longer than the test's timeout on this value.
      expect(Date.now() - started).to.be.below(5000);
    });
  });

  describe('rules', () => {
    let orderTemplate: string;
    before(async () => {
      const set = await client.call<Json>('/update-organization-settings', {
        time_zone: 'Europe/Berlin',
      });
      expect(set.status, set.text).to.equal(200);
      orderTemplate = await template(ORDER_APPROVAL);
    });

    it('skips a page no rule shows, with a step.skipped event naming the rule', async () => {
      const id = await run(orderTemplate);
      const d = await complete(id, 'Order', { amount: '500', submitted_on: '2026-03-27' });
      expect(d.currentStepName).to.equal('Ship');
      const review = d.steps.find((s) => s.name === 'Finance review')!;
      expect(review.status).to.equal('skipped');
      expect(review.rules).to.deep.equal({ notShownBy: 0 });
      expect(review.skippedAt).to.be.a('string');
      const types = d.history.map((e) => e.type);
      expect(types).to.deep.equal(['run.created', 'run.started', 'step.completed', 'step.skipped']);
      expect(d.history[3]!.data).to.deep.equal({
        step: 'Finance review',
        rule: 0,
        ruleName: 'large order',
        reason: 'not_shown',
      });
      expect(d.history[2]!.data.nextStep).to.equal('Ship');
    });

    it('shows the page for a large order, due two business days after the date (across a weekend, in the time zone), assigned from a field', async () => {
      const id = await run(orderTemplate);
      // Friday 2026-03-27 + 2 business days = Tuesday 2026-03-31, end of day in Berlin (CEST).
      const d = await complete(id, 'Order', {
        amount: '20000',
        submitted_on: '2026-03-27',
        manager: 'grace@example.com',
      });
      expect(d.currentStepName).to.equal('Finance review');
      const review = d.steps.find((s) => s.name === 'Finance review')!;
      expect(review.dueDate).to.equal('2026-03-31T21:59:59.999Z');
      expect(review.assignee).to.equal('grace@example.com');
      expect(review.rules).to.deep.equal({ shownBy: 0, dueBy: 0, assignedBy: 0 });
      const completed = d.history.find((e) => e.type === 'step.completed')!;
      expect(completed.data).to.include({
        nextStep: 'Finance review',
        nextAssignee: 'grace@example.com',
        nextDueDate: '2026-03-31T21:59:59.999Z',
        nextShownByRule: 0,
        nextAssigneeByRule: 0,
        nextDueByRule: 0,
      });
      // The list shows the step as any other.
      const listed = (await client.listRuns()).body.find((r) => r.id === id)!;
      expect(listed).to.include({
        currentStepName: 'Finance review',
        currentStepAssignee: 'grace@example.com',
        currentStepDueDate: '2026-03-31T21:59:59.999Z',
      });
    });

    it('lets an assignment given at create win over an assign rule', async () => {
      const id = await run(orderTemplate, {}, { user_assignments: { 'Finance review': 'cfo' } });
      const d = await complete(id, 'Order', {
        amount: '20000',
        submitted_on: '2026-03-27',
        manager: 'grace@example.com',
      });
      const review = d.steps.find((s) => s.name === 'Finance review')!;
      expect(review.assignee).to.equal('cfo');
      expect(review.rules).to.deep.equal({ shownBy: 0, dueBy: 0 });
    });

    it('decides each page when the run reaches it: skipped by an early value, shown by a later one; the later of two rules wins', async () => {
      const id = await template({
        name: 'Branches',
        pages: [
          { name: 'One', inputFields: [{ inputId: 'x', fieldName: 'X', type: 'number' }] },
          {
            name: 'Two',
            inputFields: [{ inputId: 'y', fieldName: 'Y', type: 'select', options: ['yes', 'no'] }],
          },
          { name: 'Three', inputFields: [] },
          { name: 'Four', inputFields: [] },
          { name: 'Five', inputFields: [] },
        ],
        rules: [
          {
            when: { all: [{ field: 'y', op: 'equals', value: 'yes' }] },
            then: [{ action: 'show_page', page: 'Three' }],
          },
          {
            name: 'small x',
            when: { any: [{ field: 'x', op: 'lt', value: '5' }] },
            then: [{ action: 'hide_page', page: 'Four' }],
          },
          {
            when: { all: [{ field: 'x', op: 'gt', value: '5' }] },
            then: [{ action: 'show_page', page: 'Five' }],
          },
          {
            name: 'huge x',
            when: { all: [{ field: 'x', op: 'gt', value: '8' }] },
            then: [{ action: 'hide_page', page: 'Five' }],
          },
        ],
      });
      const stream = await SseClient.open(
        `${api.url}/stream-run-events?type=step.skipped`,
        tenant.key,
      );
      streams.push(stream);

      // x = 9: Four is shown (no rule hides it), Five is hidden by the later rule.
      const a = await run(id);
      let d = await complete(a, 'One', { x: '9' });
      expect(d.currentStepName).to.equal('Two');
      d = await complete(a, 'Two', { y: 'yes' });
      expect(d.currentStepName).to.equal('Three');
      expect(d.steps[2]!.rules).to.deep.equal({ shownBy: 0 });
      d = await complete(a, 'Three');
      expect(d.currentStepName).to.equal('Four');
      d = await complete(a, 'Four');
      expect(d.status).to.equal('completed');
      expect(d.steps.map((s) => s.status)).to.deep.equal([
        'completed',
        'completed',
        'completed',
        'completed',
        'skipped',
      ]);
      expect(d.steps[4]!.rules).to.deep.equal({ hiddenBy: 3 });
      expect(d.history.slice(-3).map((e) => e.type)).to.deep.equal([
        'step.completed',
        'step.skipped',
        'run.completed',
      ]);

      // x = 6: Five is shown by rule 2; y = no skips Three; x ≥ 5 leaves Four.
      const b = await run(id);
      await complete(b, 'One', { x: '6' });
      d = await complete(b, 'Two', { y: 'no' });
      expect(d.currentStepName).to.equal('Four');
      expect(d.steps[2]).to.include({ status: 'skipped' });
      d = await complete(b, 'Four');
      expect(d.currentStepName).to.equal('Five');
      expect(d.steps[4]!.rules).to.deep.equal({ shownBy: 2 });

      // Every skip went out on the live stream, in order, with its data.
      await stream.until('skips streamed', () => stream.events.length >= 2);
      const skips = stream.events.map((m) => JSON.parse(m.data) as { data: Json });
      expect(skips.map((s) => [s.data.runId, s.data.step, s.data.rule])).to.deep.equal([
        [a, 'Five', 3],
        [b, 'Three', 0],
      ]);
      expect(skips[0]!.data).to.include({ ruleName: 'huge x', reason: 'hidden' });
    });
  });

  describe('refusals of a template', () => {
    const base = (extra: Json): Json => ({
      name: 'Refused',
      pages: [
        { name: 'A', inputFields: [{ inputId: 'a', fieldName: 'A', type: 'number' }] },
        { name: 'B', inputFields: [{ inputId: 'b', fieldName: 'B' }] },
      ],
      ...extra,
    });
    const cases: Array<[string, Json, string, string]> = [
      [
        'a rule naming a page the template lacks',
        base({
          rules: [
            {
              when: { all: [{ field: 'a', op: 'gt', value: '1' }] },
              then: [{ action: 'show_page', page: 'Z' }],
            },
          ],
        }),
        'invalid_rule',
        '/rules/0/then/0/page',
      ],
      [
        'a condition on a value not known yet when it is evaluated',
        base({
          rules: [
            {
              when: { all: [{ field: 'b', op: 'equals', value: 'x' }] },
              then: [{ action: 'hide_page', page: 'B' }],
            },
          ],
        }),
        'invalid_rule',
        '/rules/0/when/all/0/field',
      ],
      [
        'a comparison across types',
        base({
          pages: [
            { name: 'A', inputFields: [{ inputId: 'a', fieldName: 'A' }] },
            { name: 'B', inputFields: [] },
          ],
          rules: [
            {
              when: { all: [{ field: 'a', op: 'gt', value: '1' }] },
              then: [{ action: 'hide_page', page: 'B' }],
            },
          ],
        }),
        'invalid_rule',
        '/rules/0/when/all/0/op',
      ],
      [
        'a pattern RE2 does not compile',
        base({
          pages: [
            { name: 'A', inputFields: [{ inputId: 'a', fieldName: 'A', pattern: '(a)\\1' }] },
          ],
        }),
        'invalid_template_field',
        '/pages/0/inputFields/0/pattern',
      ],
      [
        'options on a number',
        base({
          pages: [
            {
              name: 'A',
              inputFields: [{ inputId: 'a', fieldName: 'A', type: 'number', options: ['1'] }],
            },
          ],
        }),
        'invalid_template_field',
        '/pages/0/inputFields/0/options',
      ],
      [
        'more rules than a template may hold',
        base({
          rules: Array.from({ length: 201 }, () => ({
            when: { all: [{ field: 'a', op: 'gt', value: '1' }] },
            then: [{ action: 'hide_page', page: 'B' }],
          })),
        }),
        'invalid_body',
        '/rules',
      ],
    ];
    for (const [what, body, code, field] of cases) {
      it(`refuses ${what} with 400 ${code} at ${field}, saving nothing`, async () => {
        const before = await testDb()('workflow_templates')
          .where({ organization_id: tenant.orgId })
          .count({ n: '*' });
        const reply = await client.call<Json>('/create-workflow-template', body);
        expect(reply.status, reply.text).to.equal(400);
        expect(reply.body).to.include({ code, field });
        const after = await testDb()('workflow_templates')
          .where({ organization_id: tenant.orgId })
          .count({ n: '*' });
        expect(after).to.deep.equal(before);
      });
    }

    it('refuses a definition nested deeper than its schema, and a body past the size limit', async () => {
      const deep = await client.call<Json>(
        '/create-workflow-template',
        base({
          rules: [
            { when: { all: [{ field: 'a', op: 'gt', value: { nested: [[[1]]] } }] }, then: [] },
          ],
        }),
      );
      expect(deep.status).to.equal(400);
      expect(deep.body).to.include({ code: 'invalid_body' });
      const huge = await client.call<Json>(
        '/create-workflow-template',
        base({ name: 'x'.repeat(300_000) }),
      );
      expect(huge.status).to.equal(413);
    });
  });

  describe('templates from before', () => {
    it('answer as before: no fields list, no rules in the run, the same events', async () => {
      const id = await run(tenant.template.id, { item: 'Laptop' });
      const d = await complete(id, 'Request', { amount: '1200' });
      expect(d).not.to.have.property('fields');
      expect(d.steps[0]).not.to.have.property('rules');
      const created = await client.getRun(id);
      expect(created.status).to.equal(200);
      const raw = await testDb()('workflow_runs').where({ id }).first('run_json');
      const stored = JSON.parse(String(raw.run_json)) as Json;
      expect(stored).not.to.have.property('time_zone');
      expect(Object.keys(stored.template as Json)).to.deep.equal(['id', 'name', 'version']);
      expect(d.history.map((e) => e.type)).to.deep.equal([
        'run.created',
        'run.started',
        'step.completed',
      ]);
      expect(Object.keys(d.history[2]!.data).sort()).to.deep.equal(
        ['step', 'inputFields', 'nextStep'].sort(),
      );
    });
  });
});
