// The rules of a template: what decidePage decides for each op and type, which rule wins, what
// checkRules refuses and where it points; then decidePage against a plain reference evaluation
// on random templates, rules and values.
import { expect } from 'chai';
import fc from 'fast-check';
import { DomainError } from '../../src/errors.js';
import type {
  Condition,
  ConditionOp,
  DueSpec,
  FieldType,
  Rule,
  RuleAction,
  TemplateDefinition,
  TemplateInputField,
} from '../../src/templates/definition/definition-types.js';
import { TEMPLATE_LIMITS } from '../../src/templates/definition/definition-types.js';
import { checkDueSpec, checkRules } from '../../src/templates/definition/rule-checks.js';
import {
  compileRules,
  decidePage,
  hasRules,
  type PageDecision,
} from '../../src/templates/definition/rules.js';

const pages: TemplateDefinition['pages'] = [
  {
    name: 'Intake',
    inputFields: [
      { inputId: 'name', fieldName: 'Name' },
      { inputId: 'notes', fieldName: 'Notes', type: 'long_text' },
      { inputId: 'email', fieldName: 'Email', type: 'email' },
      { inputId: 'site', fieldName: 'Site', type: 'url' },
      { inputId: 'plan', fieldName: 'Plan', type: 'select', options: ['Basic', 'Pro', 'Max'] },
      {
        inputId: 'channels',
        fieldName: 'Channels',
        type: 'multi_select',
        options: ['Email', 'Phone', 'Post'],
      },
      { inputId: 'amount', fieldName: 'Amount', type: 'number', min: 0, max: 1000 },
      { inputId: 'start', fieldName: 'Start', type: 'date' },
      { inputId: 'meet', fieldName: 'Meeting', type: 'datetime' },
      { inputId: 'agree', fieldName: 'Agree', type: 'checkbox' },
      { inputId: 'constructor', fieldName: 'Tricky' },
    ],
  },
  {
    name: 'Review',
    inputFields: [
      { inputId: 'reviewer', fieldName: 'Reviewer' },
      { inputId: 'deadline', fieldName: 'Deadline', type: 'date' },
    ],
  },
  { name: 'Approve', inputFields: [{ inputId: 'ok', fieldName: 'OK', type: 'checkbox' }] },
  { name: 'Archive', inputFields: [] },
];
const APPROVE = 2;

function template(rules: Rule[] | undefined): TemplateDefinition {
  return rules === undefined ? { name: 'T', pages } : { name: 'T', pages, rules };
}

function decide(rules: Rule[], values: Record<string, string>, page = APPROVE): PageDecision {
  return decidePage(compileRules(template(rules)), page, values);
}

/** Whether one condition holds for these values (a rule showing Approve fires). */
function holds(condition: Condition, values: Record<string, string>): boolean {
  return decide(
    [{ when: { all: [condition] }, then: [{ action: 'show_page', page: 'Approve' }] }],
    values,
  ).visible;
}

/** The refusal: code invalid_rule (unless told), the pointer, a message for a person. */
function expectRefusal(
  fn: () => unknown,
  field: string,
  message: RegExp,
  code = 'invalid_rule',
): void {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal(code);
    expect((err as DomainError).field).to.equal(field);
    expect((err as Error).message).to.match(message);
    return;
  }
  expect.fail(`expected a refusal at ${field}`);
}

const show = (page = 'Approve'): RuleAction => ({ action: 'show_page', page });
const hide = (page = 'Approve'): RuleAction => ({ action: 'hide_page', page });
const when = (...all: Condition[]) => ({ all });
const planIs = (value: string): Condition => ({ field: 'plan', op: 'equals', value });

describe('template rules', () => {
  describe('conditions', () => {
    it('text types: equals and not_equals the exact string, contains a case-sensitive substring, one_of', () => {
      for (const [field, value, part] of [
        ['name', 'Ann Lee', 'n L'],
        ['notes', 'line one\nline two', 'one\nline'],
        ['email', 'ann@example.com', '@example'],
        ['site', 'https://example.com/a', 'example.com'],
      ] as const) {
        const values = { [field]: value };
        expect(holds({ field, op: 'equals', value }, values), field).to.equal(true);
        expect(holds({ field, op: 'equals', value: value.toUpperCase() }, values)).to.equal(false);
        expect(holds({ field, op: 'not_equals', value }, values)).to.equal(false);
        expect(holds({ field, op: 'contains', value: part }, values)).to.equal(true);
        expect(holds({ field, op: 'contains', value: part.toUpperCase() }, values)).to.equal(false);
        expect(holds({ field, op: 'one_of', values: ['x@y.io', value] }, values)).to.equal(true);
        expect(holds({ field, op: 'one_of', values: [`${value}x`] }, values)).to.equal(false);
      }
      expect(holds({ field: 'name', op: 'equals', value: 'Ann' }, { name: 'Ann ' })).to.equal(
        false,
      );
    });

    it('select: the exact option', () => {
      const values = { plan: 'Pro' };
      expect(holds(planIs('Pro'), values)).to.equal(true);
      expect(holds(planIs('Max'), values)).to.equal(false);
      expect(holds({ field: 'plan', op: 'not_equals', value: 'Max' }, values)).to.equal(true);
      expect(holds({ field: 'plan', op: 'one_of', values: ['Basic', 'Pro'] }, values)).to.equal(
        true,
      );
      expect(holds({ field: 'plan', op: 'one_of', values: ['Basic', 'Max'] }, values)).to.equal(
        false,
      );
    });

    it('multi_select: equals the same set in any order, one_of shares an option, contains one', () => {
      const values = { channels: '["Email","Phone"]' };
      const c = (op: ConditionOp, value: string): Condition => ({ field: 'channels', op, value });
      expect(holds(c('equals', '["Phone","Email"]'), values)).to.equal(true);
      expect(holds(c('equals', '["Email"]'), values)).to.equal(false);
      expect(holds(c('equals', '["Email","Phone","Post"]'), values)).to.equal(false);
      expect(holds(c('not_equals', '["Email"]'), values)).to.equal(true);
      expect(holds(c('not_equals', '["Phone","Email"]'), values)).to.equal(false);
      expect(holds(c('contains', 'Phone'), values)).to.equal(true);
      expect(holds(c('contains', 'Post'), values)).to.equal(false);
      const oneOf = (...options: string[]): Condition => ({
        field: 'channels',
        op: 'one_of',
        values: options,
      });
      expect(holds(oneOf('Post', 'Phone'), values)).to.equal(true);
      expect(holds(oneOf('Post'), values)).to.equal(false);
    });

    it('number: numeric equality and order', () => {
      const c = (op: ConditionOp, value: string): Condition => ({ field: 'amount', op, value });
      const values = { amount: '42.5' };
      expect(holds(c('equals', '42.50'), values)).to.equal(true);
      expect(holds(c('equals', '42'), values)).to.equal(false);
      expect(holds(c('not_equals', '42'), values)).to.equal(true);
      expect(holds(c('gt', '42'), values)).to.equal(true);
      expect(holds(c('gt', '42.5'), values)).to.equal(false);
      expect(holds(c('gte', '42.5'), values)).to.equal(true);
      expect(holds(c('lt', '100'), values)).to.equal(true);
      expect(holds(c('lt', '42.5'), values)).to.equal(false);
      expect(holds(c('lte', '42.5'), values)).to.equal(true);
      expect(holds(c('lte', '-1'), values)).to.equal(false);
      // Numeric, not textual: "9" < "10".
      expect(holds(c('lt', '10'), { amount: '9' })).to.equal(true);
      expect(holds({ field: 'amount', op: 'one_of', values: ['1', '42.5'] }, values)).to.equal(
        true,
      );
    });

    it('date: the same day, and order', () => {
      const c = (op: ConditionOp, value: string): Condition => ({ field: 'start', op, value });
      const values = { start: '2026-03-29' };
      expect(holds(c('equals', '2026-03-29'), values)).to.equal(true);
      expect(holds(c('equals', '2026-03-30'), values)).to.equal(false);
      expect(holds(c('gt', '2026-03-28'), values)).to.equal(true);
      expect(holds(c('gt', '2026-03-29'), values)).to.equal(false);
      expect(holds(c('gte', '2026-03-29'), values)).to.equal(true);
      expect(holds(c('lt', '2026-12-01'), values)).to.equal(true);
      expect(holds(c('lte', '2026-03-28'), values)).to.equal(false);
    });

    it('datetime: the same instant whatever the offset, and order', () => {
      const c = (op: ConditionOp, value: string): Condition => ({ field: 'meet', op, value });
      const values = { meet: '2026-03-29T09:30:00+02:00' };
      expect(holds(c('equals', '2026-03-29T07:30:00Z'), values)).to.equal(true);
      expect(holds(c('equals', '2026-03-29T09:30:00Z'), values)).to.equal(false);
      expect(holds(c('not_equals', '2026-03-29T07:30:00.000Z'), values)).to.equal(false);
      expect(holds(c('gt', '2026-03-29T08:00:00+01:00'), values)).to.equal(true);
      expect(holds(c('lt', '2026-03-29T08:00:00Z'), values)).to.equal(true);
      expect(holds(c('gte', '2026-03-29T07:30:00Z'), values)).to.equal(true);
      expect(holds(c('lte', '2026-03-29T07:29:59Z'), values)).to.equal(false);
      expect(
        holds(
          { field: 'meet', op: 'one_of', values: ['2026-01-01T00:00:00Z', '2026-03-29T07:30:00Z'] },
          values,
        ),
      ).to.equal(true);
    });

    it('checkbox: the same boolean', () => {
      const c = (op: ConditionOp, value: string): Condition => ({ field: 'agree', op, value });
      expect(holds(c('equals', 'true'), { agree: 'true' })).to.equal(true);
      expect(holds(c('equals', 'true'), { agree: 'false' })).to.equal(false);
      expect(holds(c('not_equals', 'true'), { agree: 'false' })).to.equal(true);
      expect(holds(c('equals', 'false'), { agree: 'false' })).to.equal(true);
      // Unticked and never given are not the same: absent is empty.
      expect(holds(c('equals', 'false'), {})).to.equal(false);
    });

    it('an absent or empty value: empty and not_equals hold, every other op fails', () => {
      const cases: Array<[string, Record<string, string>]> = [
        ['name', {}],
        ['name', { name: '' }],
        ['name', { name: '  ' }],
        ['channels', { channels: '[]' }],
        ['amount', {}],
        ['start', { start: '' }],
        ['meet', {}],
        ['agree', {}],
        ['plan', {}],
      ];
      const literal: Record<string, string> = {
        name: 'a',
        channels: '["Email"]',
        amount: '1',
        start: '2026-01-01',
        meet: '2026-01-01T00:00:00Z',
        agree: 'true',
        plan: 'Pro',
      };
      for (const [field, values] of cases) {
        const value = literal[field]!;
        const at = `${field} ${JSON.stringify(values)}`;
        expect(holds({ field, op: 'empty' }, values), at).to.equal(true);
        expect(holds({ field, op: 'not_empty' }, values), at).to.equal(false);
        expect(holds({ field, op: 'not_equals', value }, values), at).to.equal(true);
        expect(holds({ field, op: 'equals', value }, values), at).to.equal(false);
        expect(
          holds({ field, op: 'one_of', values: [field === 'channels' ? 'Email' : value] }, values),
          at,
        ).to.equal(false);
        if (['amount', 'start', 'meet'].includes(field)) {
          for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
            expect(holds({ field, op, value }, values), `${at} ${op}`).to.equal(false);
          }
        }
        if (['name', 'channels'].includes(field)) {
          const part = field === 'channels' ? 'Email' : 'a';
          expect(holds({ field, op: 'contains', value: part }, values), at).to.equal(false);
        }
      }
    });

    it('a stored value that does not parse matches nothing: not_equals and not_empty hold', () => {
      for (const [field, bad, value] of [
        ['amount', 'lots', '1'],
        ['start', 'tomorrow', '2026-01-01'],
        ['meet', 'soon', '2026-01-01T00:00:00Z'],
        ['agree', 'yes', 'true'],
        ['channels', 'Email', '["Email"]'],
        ['email', 'not-an-email', 'a@b.io'],
      ] as const) {
        const values = { [field]: bad };
        expect(holds({ field, op: 'equals', value }, values), field).to.equal(false);
        expect(holds({ field, op: 'not_equals', value }, values), field).to.equal(true);
        expect(holds({ field, op: 'empty' }, values), field).to.equal(false);
        expect(holds({ field, op: 'not_empty' }, values), field).to.equal(true);
        expect(holds({ field, op: 'one_of', values: [value] }, values), field).to.equal(false);
      }
      expect(holds({ field: 'amount', op: 'gt', value: '1' }, { amount: 'lots' })).to.equal(false);
      expect(holds({ field: 'amount', op: 'lt', value: '1' }, { amount: 'lots' })).to.equal(false);
      expect(
        holds({ field: 'channels', op: 'contains', value: 'Email' }, { channels: '{' }),
      ).to.equal(false);
    });

    it('reads values as own properties only: an inputId may be "constructor"', () => {
      expect(holds({ field: 'constructor', op: 'empty' }, {})).to.equal(true);
      expect(
        holds({ field: 'constructor', op: 'equals', value: 'x' }, { constructor: 'x' }),
      ).to.equal(true);
      const inherited = Object.create({ name: 'Ann' }) as Record<string, string>;
      expect(holds({ field: 'name', op: 'empty' }, inherited)).to.equal(true);
    });

    it('all: every condition holds; any: at least one', () => {
      const a: Condition = planIs('Pro');
      const b: Condition = { field: 'amount', op: 'gt', value: '10' };
      const rule = (w: Rule['when']): Rule[] => [{ when: w, then: [show()] }];
      const cases: Array<[Record<string, string>, boolean, boolean]> = [
        [{ plan: 'Pro', amount: '11' }, true, true],
        [{ plan: 'Pro', amount: '9' }, false, true],
        [{ plan: 'Max', amount: '11' }, false, true],
        [{ plan: 'Max', amount: '9' }, false, false],
      ];
      for (const [values, all, any] of cases) {
        expect(decide(rule({ all: [a, b] }), values).visible).to.equal(all);
        expect(decide(rule({ any: [a, b] }), values).visible).to.equal(any);
      }
    });
  });

  describe('decisions', () => {
    it('a page no rule names is visible, with nothing decided', () => {
      const rules: Rule[] = [{ when: when(planIs('Pro')), then: [show('Approve')] }];
      expect(decide(rules, { plan: 'Pro' }, 1)).to.deep.equal({ visible: true });
      expect(decide(rules, { plan: 'Pro' }, 3)).to.deep.equal({ visible: true });
    });

    it('a page some show_page names is hidden until one fires; not_shown names the last such rule', () => {
      const rules: Rule[] = [
        { name: 'pro', when: when(planIs('Pro')), then: [show()] },
        { when: when(planIs('Max')), then: [{ action: 'assign', page: 'Approve', user: 'ann' }] },
        { name: 'max', when: when(planIs('Max')), then: [show()] },
        { when: when(planIs('Basic')), then: [show('Archive')] },
      ];
      expect(decide(rules, { plan: 'Basic' })).to.deep.equal({
        visible: false,
        visibility: { rule: 2, how: 'not_shown' },
      });
      expect(decide(rules, {})).to.deep.equal({
        visible: false,
        visibility: { rule: 2, how: 'not_shown' },
      });
      expect(decide(rules, { plan: 'Pro' })).to.deep.equal({
        visible: true,
        visibility: { rule: 0, how: 'shown' },
      });
      expect(decide(rules, { plan: 'Max' })).to.deep.equal({
        visible: true,
        visibility: { rule: 2, how: 'shown' },
        assign: { rule: 1, user: 'ann' },
      });
    });

    it('hide_page hides; for visibility the later firing rule wins, either way', () => {
      const pro = planIs('Pro');
      const big: Condition = { field: 'amount', op: 'gte', value: '100' };
      const showThenHide: Rule[] = [
        { when: when(pro), then: [show()] },
        { when: when(big), then: [hide()] },
      ];
      expect(decide(showThenHide, { plan: 'Pro', amount: '100' })).to.deep.equal({
        visible: false,
        visibility: { rule: 1, how: 'hidden' },
      });
      expect(decide(showThenHide, { plan: 'Pro', amount: '5' })).to.deep.equal({
        visible: true,
        visibility: { rule: 0, how: 'shown' },
      });
      expect(decide(showThenHide, { amount: '500' })).to.deep.equal({
        visible: false,
        visibility: { rule: 1, how: 'hidden' },
      });
      const hideThenShow: Rule[] = [
        { when: when(big), then: [hide()] },
        { when: when(pro), then: [show()] },
      ];
      expect(decide(hideThenShow, { plan: 'Pro', amount: '100' })).to.deep.equal({
        visible: true,
        visibility: { rule: 1, how: 'shown' },
      });
      // Only hide_page names the page: visible by default, hidden when it fires.
      const onlyHide: Rule[] = [{ when: when(big), then: [hide()] }];
      expect(decide(onlyHide, { amount: '1' })).to.deep.equal({ visible: true });
      expect(decide(onlyHide, { amount: '100' })).to.deep.equal({
        visible: false,
        visibility: { rule: 0, how: 'hidden' },
      });
    });

    it('set_due and assign: the later firing rule wins', () => {
      const soon: DueSpec = { anchor: 'step_start', amount: 4, unit: 'hours' };
      const later: DueSpec = {
        anchor: 'field',
        field: 'deadline',
        amount: -1,
        unit: 'business_days',
      };
      const rules: Rule[] = [
        {
          when: when(planIs('Pro')),
          then: [
            { action: 'set_due', page: 'Approve', due: soon },
            { action: 'assign', page: 'Approve', user: 'ann' },
          ],
        },
        {
          when: { any: [{ field: 'reviewer', op: 'not_empty' }] },
          then: [
            { action: 'set_due', page: 'Approve', due: later },
            { action: 'assign', page: 'Approve', fromField: 'reviewer' },
          ],
        },
        { when: when(planIs('Max')), then: [{ action: 'assign', page: 'Approve', user: 'max' }] },
      ];
      expect(checkRules(template(rules))).to.equal(undefined);
      expect(decide(rules, { plan: 'Pro' })).to.deep.equal({
        visible: true,
        due: { spec: soon, rule: 0 },
        assign: { rule: 0, user: 'ann' },
      });
      expect(decide(rules, { plan: 'Pro', reviewer: 'bob' })).to.deep.equal({
        visible: true,
        due: { spec: later, rule: 1 },
        assign: { rule: 1, fromField: 'reviewer' },
      });
      expect(decide(rules, { plan: 'Max', reviewer: 'bob' })).to.deep.equal({
        visible: true,
        due: { spec: later, rule: 1 },
        assign: { rule: 2, user: 'max' },
      });
      expect(decide(rules, {})).to.deep.equal({ visible: true });
    });

    it('a rule acting on several pages decides each of them', () => {
      const rules: Rule[] = [
        {
          when: when(planIs('Pro')),
          then: [hide('Review'), { action: 'assign', page: 'Archive', user: 'ann' }],
        },
      ];
      expect(decide(rules, { plan: 'Pro' }, 1)).to.deep.equal({
        visible: false,
        visibility: { rule: 0, how: 'hidden' },
      });
      expect(decide(rules, { plan: 'Pro' }, 3)).to.deep.equal({
        visible: true,
        assign: { rule: 0, user: 'ann' },
      });
      expect(decide(rules, { plan: 'Pro' }, 0)).to.deep.equal({ visible: true });
    });

    it('hasRules, and a template without rules decides from one shared constant', () => {
      expect(hasRules(template(undefined))).to.equal(false);
      expect(hasRules(template([]))).to.equal(false);
      expect(hasRules(template([{ when: when(planIs('Pro')), then: [show()] }]))).to.equal(true);
      const plain = compileRules(template(undefined));
      expect(compileRules(template([]))).to.equal(plain);
      const first = decidePage(plain, 0, {});
      expect(first).to.deep.equal({ visible: true });
      expect(decidePage(plain, 1, { name: 'x' })).to.equal(first);
      expect(Object.isFrozen(first)).to.equal(true);
    });

    it('compiles a definition once', () => {
      const definition = template([{ when: when(planIs('Pro')), then: [show()] }]);
      expect(compileRules(definition)).to.equal(compileRules(definition));
    });

    it('never throws on a definition that skipped the check', () => {
      const rules = [
        { when: { all: [{ field: 'nope', op: 'equals', value: 'x' }] }, then: [show('Nowhere')] },
        { when: { all: [{ field: 'amount', op: 'equals', value: 'lots' }] }, then: [show()] },
        {
          when: { any: [{ field: 'nope', op: 'not_equals', value: 'x' }] },
          then: [hide('Archive')],
        },
      ] as Rule[];
      expect(decide(rules, { amount: '1', nope: 'x' })).to.deep.equal({
        visible: false,
        visibility: { rule: 1, how: 'not_shown' },
      });
      expect(decide(rules, {}, 3)).to.deep.equal({
        visible: false,
        visibility: { rule: 2, how: 'hidden' },
      });
    });
  });

  describe('checkRules', () => {
    const valid: Rule[] = [
      {
        name: 'Big Pro deals',
        when: {
          all: [
            planIs('Pro'),
            { field: 'amount', op: 'gte', value: '100' },
            { field: 'channels', op: 'one_of', values: ['Email', 'Post'] },
            { field: 'channels', op: 'equals', value: '["Post","Email"]' },
            { field: 'channels', op: 'contains', value: 'Phone' },
            { field: 'notes', op: 'contains', value: 'urgent' },
            { field: 'meet', op: 'lt', value: '2026-03-29T09:30:00+02:00' },
            { field: 'start', op: 'not_equals', value: '2026-01-01' },
            { field: 'agree', op: 'equals', value: 'true' },
            { field: 'email', op: 'not_empty' },
            { field: 'constructor', op: 'empty' },
          ],
        },
        then: [
          show('Review'),
          {
            action: 'set_due',
            page: 'Review',
            due: { anchor: 'field', field: 'start', amount: 2, unit: 'days' },
          },
          { action: 'assign', page: 'Review', fromField: 'email' },
          hide('Approve'),
          { action: 'assign', page: 'Approve', fromField: 'reviewer' },
          {
            action: 'set_due',
            page: 'Approve',
            due: { anchor: 'field', field: 'deadline', amount: -87600, unit: 'hours' },
          },
        ],
      },
      {
        when: { any: [{ field: 'reviewer', op: 'equals', value: 'bob' }] },
        then: [show('Approve')],
      },
    ];

    it('takes well-formed rules, and a template without any', () => {
      expect(checkRules(template(valid))).to.equal(undefined);
      expect(checkRules(template(undefined))).to.equal(undefined);
      expect(checkRules(template([]))).to.equal(undefined);
    });

    /** checkRules on the valid rules with rule 1 replaced. */
    function refuses(rule: Rule, field: string, message: RegExp): void {
      expectRefusal(() => checkRules(template([valid[0]!, rule])), field, message);
    }
    const on = (...conditions: Condition[]): Rule => ({
      when: { any: conditions },
      then: [show()],
    });
    const doing = (...then: RuleAction[]): Rule => ({ when: when(planIs('Pro')), then });

    it('refuses more rules, conditions or actions than the limits', () => {
      const many = (n: number) => Array.from({ length: n }, () => valid[1]!);
      expect(checkRules(template(many(TEMPLATE_LIMITS.rules)))).to.equal(undefined);
      expectRefusal(
        () => checkRules(template(many(TEMPLATE_LIMITS.rules + 1))),
        '/rules',
        /at most 200 rules/,
      );
      const conditions = Array.from({ length: 21 }, () => planIs('Pro'));
      refuses(
        { when: { all: conditions }, then: [show()] },
        '/rules/1/when/all',
        /rules\[1\] has 21 conditions.*at most 20/,
      );
      const actions = Array.from({ length: 21 }, (_, i) => (i % 2 === 0 ? show() : hide()));
      refuses(doing(...actions), '/rules/1/then', /rules\[1\] has 21 actions.*at most 20/);
    });

    it('refuses a rule without conditions or actions', () => {
      refuses({ when: { all: [] }, then: [show()] }, '/rules/1/when/all', /no conditions/);
      refuses({ when: { any: [] }, then: [show()] }, '/rules/1/when/any', /no conditions/);
      refuses(doing(), '/rules/1/then', /does nothing/);
      refuses({ when: {}, then: [show()] } as unknown as Rule, '/rules/1/when', /all.*any/);
      refuses(
        { when: { all: [planIs('Pro')], any: [planIs('Pro')] }, then: [show()] } as unknown as Rule,
        '/rules/1/when',
        /both/,
      );
    });

    it('names the rule by index and name', () => {
      expectRefusal(
        () => checkRules(template([{ ...valid[0]!, then: [show('Nowhere')] }])),
        '/rules/0/then/0/page',
        /^rules\[0\] \("Big Pro deals"\) acts on page "Nowhere", which the template does not have/,
      );
    });

    it('refuses an unknown field or page', () => {
      refuses(
        on(planIs('Pro'), { field: 'nope', op: 'empty' }),
        '/rules/1/when/any/1/field',
        /field "nope", which no page/,
      );
      refuses(doing(show(), hide('Nowhere')), '/rules/1/then/1/page', /page "Nowhere"/);
    });

    it('refuses a condition on a field not known yet when the rule is evaluated', () => {
      refuses(
        { when: when({ field: 'reviewer', op: 'not_empty' }), then: [show('Review')] },
        '/rules/1/when/all/0/field',
        /field "reviewer" of page "Review" but acts on page "Review"/,
      );
      // Acting on an earlier page as well as a later one: the earliest decides.
      refuses(
        {
          when: when({ field: 'reviewer', op: 'not_empty' }),
          then: [show('Archive'), hide('Intake')],
        },
        '/rules/1/when/all/0/field',
        /acts on page "Intake"/,
      );
      refuses(
        { when: when({ field: 'ok', op: 'empty' }), then: [show('Review')] },
        '/rules/1/when/all/0/field',
        /field "ok" of page "Approve"/,
      );
    });

    it('refuses contains and comparisons on types that do not take them', () => {
      refuses(
        on({ field: 'amount', op: 'contains', value: '1' }),
        '/rules/1/when/any/0/op',
        /number field.*contains takes text and multi_select/,
      );
      refuses(
        on({ field: 'plan', op: 'contains', value: 'Pro' }),
        '/rules/1/when/any/0/op',
        /select field/,
      );
      refuses(
        on({ field: 'agree', op: 'contains', value: 'true' }),
        '/rules/1/when/any/0/op',
        /checkbox/,
      );
      for (const [field, value] of [
        ['name', 'a'],
        ['email', 'a@b.io'],
        ['plan', 'Pro'],
        ['channels', '["Email"]'],
        ['agree', 'true'],
      ] as const) {
        for (const op of ['gt', 'gte', 'lt', 'lte'] as const) {
          refuses(
            on({ field, op, value }),
            '/rules/1/when/any/0/op',
            /comparing across types is refused/,
          );
        }
      }
    });

    it('refuses a missing or superfluous value or values', () => {
      refuses(on({ field: 'name', op: 'equals' }), '/rules/1/when/any/0/value', /gives no `value`/);
      refuses(on({ field: 'amount', op: 'gt' }), '/rules/1/when/any/0/value', /gives no `value`/);
      refuses(
        on({ field: 'name', op: 'contains' }),
        '/rules/1/when/any/0/value',
        /gives no `value`/,
      );
      refuses(
        on({ field: 'name', op: 'equals', value: 'a', values: ['a'] }),
        '/rules/1/when/any/0/values',
        /not `values`/,
      );
      refuses(
        on({ field: 'name', op: 'empty', value: 'a' }),
        '/rules/1/when/any/0/value',
        /takes no `value`/,
      );
      refuses(
        on({ field: 'name', op: 'not_empty', values: ['a'] }),
        '/rules/1/when/any/0/values',
        /takes no `values`/,
      );
      refuses(
        on({ field: 'name', op: 'one_of' }),
        '/rules/1/when/any/0/values',
        /gives no `values`/,
      );
      refuses(
        on({ field: 'name', op: 'one_of', value: 'a', values: ['a'] }),
        '/rules/1/when/any/0/value',
        /not `value`/,
      );
    });

    it('refuses one_of with no values, too many, or the same value twice', () => {
      refuses(
        on({ field: 'name', op: 'one_of', values: [] }),
        '/rules/1/when/any/0/values',
        /empty/,
      );
      const many = Array.from({ length: TEMPLATE_LIMITS.oneOfValues + 1 }, (_, i) => `v${i}`);
      refuses(
        on({ field: 'name', op: 'one_of', values: many }),
        '/rules/1/when/any/0/values',
        /101 values.*at most 100/,
      );
      expect(
        checkRules(template([on({ field: 'name', op: 'one_of', values: many.slice(1) })])),
      ).to.equal(undefined);
      refuses(
        on({ field: 'name', op: 'one_of', values: ['a', 'b', 'a'] }),
        '/rules/1/when/any/0/values/2',
        /"a" twice/,
      );
      // The same instant written twice is the same value.
      refuses(
        on({
          field: 'meet',
          op: 'one_of',
          values: ['2026-03-29T09:30:00+02:00', '2026-03-29T07:30:00Z'],
        }),
        '/rules/1/when/any/0/values/1',
        /twice/,
      );
      refuses(
        on({ field: 'amount', op: 'one_of', values: ['2', '2.0'] }),
        '/rules/1/when/any/0/values/1',
        /twice/,
      );
      refuses(
        on({ field: 'channels', op: 'one_of', values: ['Email', 'Email'] }),
        '/rules/1/when/any/0/values/1',
        /twice/,
      );
    });

    it('refuses a literal that is not a value of the field', () => {
      const at = '/rules/1/when/any/0/value';
      refuses(
        on({ field: 'amount', op: 'equals', value: 'lots' }),
        at,
        /"lots", which is not a number/,
      );
      // equals a value the field cannot hold (beyond max): it could never be equal.
      refuses(
        on({ field: 'amount', op: 'equals', value: '2000' }),
        at,
        /more than the maximum 1000/,
      );
      refuses(on({ field: 'amount', op: 'gt', value: '1e3' }), at, /not a number/);
      refuses(on({ field: 'start', op: 'lt', value: 'tomorrow' }), at, /not a date/);
      refuses(on({ field: 'start', op: 'equals', value: '2026-02-30' }), at, /not a date/);
      refuses(
        on({ field: 'meet', op: 'gte', value: '2026-03-29T09:30:00' }),
        at,
        /not a date and time/,
      );
      refuses(on({ field: 'agree', op: 'equals', value: 'yes' }), at, /not a checkbox value/);
      refuses(on({ field: 'email', op: 'equals', value: 'ann' }), at, /not an email address/);
      refuses(
        on({ field: 'site', op: 'not_equals', value: 'example.com' }),
        at,
        /not a web address/,
      );
      refuses(on(planIs('Gold')), at, /"Gold", which is not one of the options/);
      refuses(on({ field: 'channels', op: 'equals', value: 'Email' }), at, /not a list of options/);
      refuses(
        on({ field: 'channels', op: 'equals', value: '["Fax"]' }),
        at,
        /"Fax", which is not one of the options/,
      );
      refuses(
        on({ field: 'channels', op: 'contains', value: '["Email"]' }),
        at,
        /not one of its options/,
      );
      refuses(
        on({ field: 'channels', op: 'contains', value: 'Fax' }),
        at,
        /"Fax", which is not one of its options/,
      );
      refuses(on({ field: 'name', op: 'contains', value: '' }), at, /empty string/);
      refuses(
        on({ field: 'name', op: 'equals', value: ' ' }),
        at,
        /empty value: test for no value with empty/,
      );
      refuses(on({ field: 'channels', op: 'equals', value: '[]' }), at, /empty value/);
      refuses(on({ field: 'amount', op: 'lt', value: '' }), at, /empty value/);
      refuses(
        on({ field: 'plan', op: 'one_of', values: ['Pro', 'Gold'] }),
        '/rules/1/when/any/0/values/1',
        /"Gold"/,
      );
      refuses(
        on({ field: 'channels', op: 'one_of', values: ['["Email"]'] }),
        '/rules/1/when/any/0/values/0',
        /not one of its options/,
      );
      // A comparison's bound may lie beyond the field's limits: it is still a threshold.
      expect(checkRules(template([on({ field: 'amount', op: 'lt', value: '5000' })]))).to.equal(
        undefined,
      );
    });

    it('refuses an op it does not know, and an action it does not know', () => {
      refuses(
        on({ field: 'name', op: 'like' as ConditionOp, value: 'a' }),
        '/rules/1/when/any/0/op',
        /unknown op "like"/,
      );
      refuses(
        doing({ action: 'notify', page: 'Approve' } as unknown as RuleAction),
        '/rules/1/then/0/action',
        /unknown action "notify"/,
      );
    });

    it('refuses an assign to both or neither of user and fromField, or from an unfit field', () => {
      refuses(
        doing({
          action: 'assign',
          page: 'Approve',
          user: 'ann',
          fromField: 'reviewer',
        } as unknown as RuleAction),
        '/rules/1/then/0',
        /both a `user` and `fromField`/,
      );
      refuses(
        doing({ action: 'assign', page: 'Approve' } as unknown as RuleAction),
        '/rules/1/then/0',
        /to no one/,
      );
      refuses(
        doing({ action: 'assign', page: 'Approve', user: ' ' }),
        '/rules/1/then/0/user',
        /empty user id/,
      );
      refuses(
        doing({ action: 'assign', page: 'Approve', fromField: 'nope' }),
        '/rules/1/then/0/fromField',
        /"nope", which no page/,
      );
      refuses(
        doing({ action: 'assign', page: 'Review', fromField: 'reviewer' }),
        '/rules/1/then/0/fromField',
        /not known yet/,
      );
      refuses(
        doing({ action: 'assign', page: 'Approve', fromField: 'agree' }),
        '/rules/1/then/0/fromField',
        /checkbox field.*cannot be a user id/,
      );
      refuses(
        doing({ action: 'assign', page: 'Approve', fromField: 'channels' }),
        '/rules/1/then/0/fromField',
        /multi_select/,
      );
    });

    it('refuses a rule deciding the same thing of a page twice', () => {
      refuses(
        doing(show(), hide()),
        '/rules/1/then/1',
        /decides the visibility of page "Approve" twice/,
      );
      refuses(
        doing({ action: 'assign', page: 'Approve', user: 'a' }, show(), {
          action: 'assign',
          page: 'Approve',
          user: 'b',
        }),
        '/rules/1/then/2',
        /the assignee/,
      );
      expect(checkRules(template([doing(show(), hide('Archive'))]))).to.equal(undefined);
    });

    it('refuses a set_due whose spec does not hold, pointing into it', () => {
      const due = (spec: Record<string, unknown>, page = 'Approve'): Rule =>
        doing({ action: 'set_due', page, due: spec as unknown as DueSpec });
      const at = '/rules/1/then/0/due';
      refuses(due({ anchor: 'field', amount: 1, unit: 'days' }), `${at}/field`, /names none/);
      refuses(
        due({ anchor: 'field', field: 'nope', amount: 1, unit: 'days' }),
        `${at}/field`,
        /"nope", which no page/,
      );
      refuses(
        due({ anchor: 'field', field: 'amount', amount: 1, unit: 'days' }),
        `${at}/field`,
        /number field: it must be a date or datetime/,
      );
      refuses(
        due({ anchor: 'field', field: 'deadline', amount: 1, unit: 'days' }, 'Review'),
        `${at}/field`,
        /not known yet/,
      );
      refuses(
        due({ anchor: 'step_start', field: 'start', amount: 1, unit: 'days' }),
        `${at}/field`,
        /takes no `field`/,
      );
      refuses(
        due({ anchor: 'run_start', amount: 1.5, unit: 'days' }),
        `${at}/amount`,
        /must be whole/,
      );
      refuses(
        due({ anchor: 'run_start', amount: 0.5, unit: 'business_days' }),
        `${at}/amount`,
        /must be whole/,
      );
      refuses(
        due({ anchor: 'run_start', amount: 3651, unit: 'days' }),
        `${at}/amount`,
        /at most 3650 days/,
      );
      refuses(
        due({ anchor: 'run_start', amount: -3651, unit: 'business_days' }),
        `${at}/amount`,
        /at most 3650/,
      );
      refuses(
        due({ anchor: 'run_start', amount: 87600.5, unit: 'hours' }),
        `${at}/amount`,
        /at most 87600 hours/,
      );
      refuses(
        due({ anchor: 'run_start', amount: Number.NaN, unit: 'hours' }),
        `${at}/amount`,
        /number/,
      );
      refuses(due({ anchor: 'now', amount: 1, unit: 'hours' }), `${at}/anchor`, /"now"/);
      refuses(due({ anchor: 'run_start', amount: 1, unit: 'weeks' }), `${at}/unit`, /"weeks"/);
      refuses(
        doing({ action: 'set_due', page: 'Approve' } as unknown as RuleAction),
        `${at}`,
        /without `due`/,
      );
      expect(
        checkRules(
          template([
            due({ anchor: 'run_start', amount: -3650, unit: 'days' }),
            due({ anchor: 'step_start', amount: 1.5, unit: 'hours' }),
            due({ anchor: 'field', field: 'meet', amount: 0, unit: 'business_days' }),
          ]),
        ),
      ).to.equal(undefined);
    });

    it("checkDueSpec checks a page's own due with the code and path given", () => {
      const definition = template(undefined);
      expectRefusal(
        () =>
          checkDueSpec(
            definition,
            { anchor: 'field', field: 'deadline', amount: 1, unit: 'hours' },
            1,
            ['pages', 1, 'due'],
            'invalid_template_field',
          ),
        '/pages/1/due/field',
        /^the due time of page "Review" counts from field "deadline" of page "Review"/,
        'invalid_template_field',
      );
      expect(
        checkDueSpec(
          definition,
          { anchor: 'field', field: 'deadline', amount: 1, unit: 'hours' },
          2,
          ['pages', 2, 'due'],
          'invalid_template_field',
        ),
      ).to.equal(undefined);
    });
  });

  describe('against a reference evaluation', () => {
    // Small domains, so that random literals and values often meet.
    const OPTIONS = ['A', 'B', 'C'];
    const TYPES: FieldType[] = [
      'text',
      'email',
      'select',
      'multi_select',
      'number',
      'date',
      'datetime',
      'checkbox',
    ];

    /** A valid non-empty value in its string form; for datetime, several forms of one instant. */
    function validValue(field: TemplateInputField): fc.Arbitrary<string> {
      switch (field.type ?? 'text') {
        case 'text':
          return fc.constantFrom('a', 'ab', 'b', 'ba', 'abc');
        case 'email':
          return fc.constantFrom('a@x.io', 'ab@x.io', 'b@y.io');
        case 'select':
          return fc.constantFrom(...field.options!);
        case 'multi_select':
          return fc
            .shuffledSubarray(field.options!, { minLength: 1 })
            .map((options) => JSON.stringify(options));
        case 'number':
          return fc.constantFrom('-1', '0', '1', '1.5', '2', '10');
        case 'date':
          return fc.constantFrom('2026-01-01', '2026-01-02', '2026-01-10', '2025-12-31');
        case 'datetime':
          return fc.constantFrom(
            '2026-01-01T00:00:00Z',
            '2026-01-01T01:00:00+01:00',
            '2026-01-01T00:30:00Z',
            '2025-12-31T23:00:00-02:00',
          );
        case 'checkbox':
          return fc.constantFrom('true', 'false');
        default:
          throw new Error(`no values for ${field.type}`);
      }
    }

    /** A run's value: absent (undefined), empty, valid, or (rarely) one that does not parse. */
    function runValue(field: TemplateInputField): fc.Arbitrary<string | undefined> {
      const empty = field.type === 'multi_select' ? fc.constantFrom('', '[]') : fc.constant('');
      const bad: Record<string, string> = {
        number: 'x',
        date: 'soon',
        datetime: '2026-01-01',
        checkbox: 'yes',
        multi_select: '{',
        email: 'nobody',
      };
      const arbitraries: Array<fc.WeightedArbitrary<string | undefined>> = [
        { arbitrary: fc.constant(undefined), weight: 2 },
        { arbitrary: empty, weight: 1 },
        { arbitrary: validValue(field), weight: 6 },
      ];
      const badValue = bad[field.type ?? 'text'];
      if (badValue !== undefined) arbitraries.push({ arbitrary: fc.constant(badValue), weight: 1 });
      return fc.oneof(...arbitraries);
    }

    const fieldArb = (id: string): fc.Arbitrary<TemplateInputField> =>
      fc
        .constantFrom(...TYPES)
        .chain((type): fc.Arbitrary<TemplateInputField> =>
          type === 'select' || type === 'multi_select'
            ? fc
                .subarray(OPTIONS, { minLength: 1 })
                .map((options) => ({ inputId: id, fieldName: id, type, options }))
            : fc.constant({ inputId: id, fieldName: id, type }),
        );

    const pagesArb: fc.Arbitrary<TemplateDefinition['pages']> = fc
      .array(fc.integer({ min: 0, max: 3 }), { minLength: 2, maxLength: 4 })
      .chain((counts) => {
        let next = 0;
        return fc.tuple(
          ...counts.map((count, p) =>
            fc
              .tuple(...Array.from({ length: count }, () => fieldArb(`f${next++}`)))
              .map((inputFields) => ({ name: `P${p}`, inputFields })),
          ),
        );
      });

    function opsOf(type: FieldType): ConditionOp[] {
      const ops: ConditionOp[] = ['equals', 'not_equals', 'one_of', 'empty', 'not_empty'];
      if (type === 'text' || type === 'email' || type === 'multi_select') ops.push('contains');
      if (type === 'number' || type === 'date' || type === 'datetime') {
        ops.push('gt', 'gte', 'lt', 'lte');
      }
      return ops;
    }

    /** The canonical form of a literal, for one_of's no-duplicates: a datetime's instant. */
    function sameValue(type: FieldType, a: string, b: string): boolean {
      if (type === 'datetime') return Date.parse(a) === Date.parse(b);
      if (type === 'number') return Number(a) === Number(b);
      return a === b;
    }

    function conditionArb(field: TemplateInputField): fc.Arbitrary<Condition> {
      const type = field.type ?? 'text';
      return fc.constantFrom(...opsOf(type)).chain((op): fc.Arbitrary<Condition> => {
        const c = { field: field.inputId, op };
        switch (op) {
          case 'empty':
          case 'not_empty':
            return fc.constant(c);
          case 'contains':
            return (
              type === 'multi_select'
                ? fc.constantFrom(...field.options!)
                : fc.constantFrom('a', 'b', 'ab', '@x', 'c')
            ).map((value) => ({ ...c, value }));
          case 'one_of':
            return fc
              .uniqueArray(
                type === 'multi_select' ? fc.constantFrom(...field.options!) : validValue(field),
                {
                  minLength: 1,
                  maxLength: 3,
                  comparator: (a, b) => sameValue(type, a, b),
                },
              )
              .map((values) => ({ ...c, values }));
          default:
            return validValue(field).map((value) => ({ ...c, value }));
        }
      });
    }

    /**
     * Valid rules: each acts on pages from a cut onward and tests fields of pages before the
     * cut; per page it decides each thing at most once.
     */
    function rulesArb(definition: TemplateDefinition): fc.Arbitrary<Rule[]> {
      const cuts = definition.pages
        .map((_, cut) => cut)
        .filter((cut) => definition.pages.slice(0, cut).some((p) => p.inputFields.length > 0));
      if (cuts.length === 0) return fc.constant([]);
      const ruleArb = fc.constantFrom(...cuts).chain((cut) => {
        const before = definition.pages.slice(0, cut).flatMap((p) => p.inputFields);
        const assignable = before.filter((f) =>
          ['text', 'email', 'select', 'number'].includes(f.type ?? 'text'),
        );
        const actionArb = fc
          .tuple(fc.integer({ min: cut, max: definition.pages.length - 1 }), fc.nat(5), fc.nat(3))
          .map(([p, kind, n]): RuleAction => {
            const page = `P${p}`;
            if (kind === 0) return { action: 'show_page', page };
            if (kind === 1) return { action: 'hide_page', page };
            if (kind === 2 || kind === 3) {
              return {
                action: 'set_due',
                page,
                due: { anchor: kind === 2 ? 'step_start' : 'run_start', amount: n, unit: 'days' },
              };
            }
            const from = assignable[n % Math.max(assignable.length, 1)];
            return kind === 5 && from !== undefined
              ? { action: 'assign', page, fromField: from.inputId }
              : { action: 'assign', page, user: `u${n}` };
          });
        const what = (a: RuleAction) =>
          `${a.page}:${a.action === 'hide_page' ? 'show_page' : a.action}`;
        return fc
          .record({
            name: fc.option(fc.constantFrom('r', 'named rule'), { nil: undefined }),
            all: fc.boolean(),
            conditions: fc.array(
              fc.constantFrom(...before).chain((f) => conditionArb(f)),
              { minLength: 1, maxLength: 4 },
            ),
            then: fc.uniqueArray(actionArb, { minLength: 1, maxLength: 4, selector: what }),
          })
          .map(({ name, all, conditions, then }): Rule => {
            const rule: Rule = { when: all ? { all: conditions } : { any: conditions }, then };
            return name === undefined ? rule : { name, ...rule };
          });
      });
      return fc.array(ruleArb, { minLength: 0, maxLength: 8 });
    }

    // ------------------------------------------------------------------------------------------
    // The reference: every rule in order, its own reading and comparison of values.

    type RefValue = string | number | boolean | string[];

    function refRead(field: TemplateInputField, raw: string): RefValue | 'bad' {
      switch (field.type ?? 'text') {
        case 'number':
          return /^-?\d+(\.\d+)?$/.test(raw) ? Number(raw) : 'bad';
        case 'date':
          return /^\d{4}-\d{2}-\d{2}$/.test(raw) ? raw : 'bad';
        case 'datetime':
          return raw.includes('T') ? Date.parse(raw) : 'bad';
        case 'checkbox':
          return raw === 'true' ? true : raw === 'false' ? false : 'bad';
        case 'multi_select':
          try {
            const list: unknown = JSON.parse(raw);
            return Array.isArray(list) ? (list as string[]) : 'bad';
          } catch {
            return 'bad';
          }
        case 'email':
          return raw.includes('@') ? raw : 'bad';
        default:
          return raw;
      }
    }

    function refEquals(a: RefValue, b: RefValue): boolean {
      if (Array.isArray(a) && Array.isArray(b)) {
        return a.every((x) => b.includes(x)) && b.every((x) => a.includes(x));
      }
      return a === b;
    }

    function refHolds(
      definition: TemplateDefinition,
      c: Condition,
      values: Record<string, string>,
    ): boolean {
      const field = definition.pages
        .flatMap((p) => p.inputFields)
        .find((f) => f.inputId === c.field)!;
      const raw = Object.hasOwn(values, c.field) ? values[c.field] : undefined;
      const isEmpty =
        raw === undefined || raw.trim() === '' || (field.type === 'multi_select' && raw === '[]');
      if (isEmpty) return c.op === 'empty' || c.op === 'not_equals';
      const v = refRead(field, raw);
      if (c.op === 'empty') return false;
      if (c.op === 'not_empty') return true;
      if (v === 'bad') return c.op === 'not_equals';
      const lit = (s: string) => refRead(field, s) as RefValue;
      switch (c.op) {
        case 'equals':
          return refEquals(v, lit(c.value!));
        case 'not_equals':
          return !refEquals(v, lit(c.value!));
        case 'one_of':
          return Array.isArray(v)
            ? v.some((o) => c.values!.includes(o))
            : c.values!.some((s) => refEquals(v, lit(s)));
        case 'contains':
          return Array.isArray(v) ? v.includes(c.value!) : String(v).includes(c.value!);
        default: {
          // Numbers, dates (as strings) and instants (as numbers).
          const a = v as number | string;
          const b = lit(c.value!) as number | string;
          return c.op === 'gt' ? a > b : c.op === 'gte' ? a >= b : c.op === 'lt' ? a < b : a <= b;
        }
      }
    }

    function reference(
      definition: TemplateDefinition,
      page: number,
      values: Record<string, string>,
    ): PageDecision {
      const name = definition.pages[page]!.name;
      const rules = definition.rules ?? [];
      const decision: PageDecision = { visible: true };
      rules.forEach((rule, i) => {
        if (rule.then.some((a) => a.action === 'show_page' && a.page === name)) {
          decision.visible = false;
          decision.visibility = { rule: i, how: 'not_shown' };
        }
      });
      rules.forEach((rule, i) => {
        const fires =
          'all' in rule.when
            ? rule.when.all.every((c) => refHolds(definition, c, values))
            : rule.when.any.some((c) => refHolds(definition, c, values));
        if (!fires) return;
        for (const a of rule.then) {
          if (a.page !== name) continue;
          if (a.action === 'show_page' || a.action === 'hide_page') {
            decision.visible = a.action === 'show_page';
            decision.visibility = { rule: i, how: a.action === 'show_page' ? 'shown' : 'hidden' };
          } else if (a.action === 'set_due') {
            decision.due = { spec: a.due, rule: i };
          } else {
            decision.assign =
              'user' in a ? { rule: i, user: a.user } : { rule: i, fromField: a.fromField };
          }
        }
      });
      return decision;
    }

    it('decidePage agrees with it on random templates, rules and values', () => {
      const caseArb = pagesArb.chain((pages) => {
        const definition: TemplateDefinition = { name: 'T', pages };
        const fields = pages.flatMap((p) => p.inputFields);
        const valuesArb = fc.tuple(...fields.map((f) => runValue(f))).map((raws) => {
          const values: Record<string, string> = {};
          raws.forEach((raw, i) => {
            if (raw !== undefined) values[fields[i]!.inputId] = raw;
          });
          return values;
        });
        return fc.tuple(
          rulesArb(definition).map((rules): TemplateDefinition => ({ ...definition, rules })),
          fc.array(valuesArb, { minLength: 1, maxLength: 4 }),
        );
      });
      let fired = 0;
      fc.assert(
        fc.property(caseArb, ([definition, valueSets]) => {
          checkRules(definition);
          const compiled = compileRules(definition);
          for (const values of valueSets) {
            for (let page = 0; page < definition.pages.length; page++) {
              const expected = reference(definition, page, values);
              expect(decidePage(compiled, page, values), `page ${page}`).to.deep.equal(expected);
              if (expected.visibility?.how === 'shown' || expected.visibility?.how === 'hidden')
                fired++;
            }
          }
        }),
        { numRuns: 500 },
      );
      // A property whose rules never fire proves little.
      expect(fired).to.be.greaterThan(100);
    });
  });
});
