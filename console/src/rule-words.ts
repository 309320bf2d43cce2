// A template's rules and due times in words, for the screens that show them: "When Amount is
// greater than 10,000, show page Finance review." Rules are numbered from 1 here, as the editor
// numbers them (the API's `rule` indexes count from 0).
import { operandOf, opWords, valueWords } from './field-types.js';
import {
  conditionsOf,
  type Condition,
  type DueSpec,
  type Rule,
  type RuleAction,
  type TemplateField,
  type TemplatePage,
} from './vocabulary.js';

/** "rule 2 (Big amounts)", from the API's index (from 0) and the rule's name. */
export function ruleLabel(index: number, name?: string): string {
  return `rule ${index + 1}${name ? ` (${name})` : ''}`;
}

export type Fields = ReadonlyMap<string, TemplateField>;

export function fieldsOf(pages: readonly TemplatePage[] | undefined): Fields {
  return new Map((pages ?? []).flatMap((page) => page.inputFields.map((f) => [f.inputId, f])));
}

const fieldName = (fields: Fields, inputId: string) => fields.get(inputId)?.fieldName ?? inputId;

const UNIT_WORDS = { hours: 'hour', days: 'day', business_days: 'business day' } as const;

/** "3 business days after the step starts", "1 day before Start date". */
export function dueWords(due: DueSpec, fields: Fields): string {
  const n = Math.abs(due.amount);
  const unit = `${UNIT_WORDS[due.unit]}${n === 1 ? '' : 's'}`;
  const anchor =
    due.anchor === 'step_start'
      ? 'the step starts'
      : due.anchor === 'run_start'
        ? 'the run starts'
        : fieldName(fields, due.field ?? '');
  return `${n} ${unit} ${due.amount < 0 ? 'before' : 'after'} ${anchor}`;
}

export function conditionWords(condition: Condition, fields: Fields): string {
  const field = fields.get(condition.field);
  const type = field?.type ?? 'text';
  const test = opWords(condition.op, type);
  const words = (v: string) =>
    type === 'checkbox' ? (v === 'true' ? 'checked' : 'not checked') : valueWords(type, v);
  const operand = operandOf(condition.op);
  const what =
    operand === 'none'
      ? ''
      : operand === 'values'
        ? ` ${(condition.values ?? []).map(words).join(', ')}`
        : ` ${words(condition.value ?? '')}`;
  return `${fieldName(fields, condition.field)} ${test}${what}`;
}

export function actionWords(action: RuleAction, fields: Fields): string {
  switch (action.action) {
    case 'show_page':
      return `show page ${action.page}`;
    case 'hide_page':
      return `hide page ${action.page}`;
    case 'set_due':
      return action.due
        ? `make ${action.page} due ${dueWords(action.due, fields)}`
        : `make ${action.page} due`;
    case 'assign':
      return action.fromField === undefined
        ? `assign ${action.page} to ${action.user ?? 'nobody'}`
        : `assign ${action.page} to the value of ${fieldName(fields, action.fromField)}`;
  }
}

/** The rule as a sentence: "When A and B, show page X and assign Y to carol." */
export function ruleWords(rule: Rule, fields: Fields): string {
  const { match, conditions } = conditionsOf(rule);
  const when = conditions
    .map((c) => conditionWords(c, fields))
    .join(match === 'all' ? ' and ' : ' or ');
  const then = rule.then.map((a) => actionWords(a, fields)).join(' and ');
  return `When ${when}, ${then}.`;
}
