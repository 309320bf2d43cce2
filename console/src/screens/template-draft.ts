// The template editor's draft: a definition as the form holds it — numbers as typed, options one
// a line, and fields and pages referred to by a key of their own, so that a rule keeps naming
// a field whose inputId is being typed or a page that moved — and the definition sent from it.
// The draft checks nothing: the API does, and names the input at fault.
import type { CreateWorkflowTemplateRequest, WorkflowTemplateDetail } from 'workflow-run-client';
import { TEXT_TYPES } from '../../../src/templates/definition/definition-types.js';
import { opsFor, operandOf } from '../field-types.js';
import {
  conditionsOf,
  type ConditionOp,
  type DueAnchor,
  type DueSpec,
  type DueUnit,
  type FieldType,
  type RuleAction,
  type TemplateField,
} from '../vocabulary.js';

/**
 * A number as the editor sends it: a number when the text typed is one; otherwise the text as
 * typed, which the API refuses naming the input.
 */
type Typed = number | string;

/**
 * A request as the editor sends it: the API document's shape, with each number as typed and a
 * choice not made (a due time's anchor) sent empty, for the API to refuse naming the input.
 */
type AsTyped<T> = T extends number
  ? Typed
  : T extends string
    ? T | ''
    : T extends ReadonlyArray<infer Item>
      ? Array<AsTyped<Item>>
      : T extends object
        ? { [K in keyof T]: AsTyped<T[K]> }
        : T;

/** A template definition as the editor sends it (create-workflow-template's body). */
export type DefinitionBody = AsTyped<CreateWorkflowTemplateRequest>;
type PageBody = DefinitionBody['pages'][number];
type FieldBody = PageBody['inputFields'][number];
type DueBody = NonNullable<PageBody['due']>;
type RuleBody = NonNullable<DefinitionBody['rules']>[number];
type ActionBody = RuleBody['then'][number];

export interface DraftField {
  key: number;
  inputId: string;
  fieldName: string;
  required: boolean;
  /** undefined: none given (a text field). */
  type: FieldType | undefined;
  /** One option a line. */
  options: string;
  min: string;
  max: string;
  integer: boolean;
  minLength: string;
  maxLength: string;
  pattern: string;
  default: string;
  help: string;
  placeholder: string;
}

export interface DraftDue {
  /** '': no relative due time (a page's only). */
  anchor: DueAnchor | '';
  /** The anchor field's key; 0 for none chosen. */
  fieldKey: number;
  amount: string;
  unit: DueUnit;
}

export interface DraftPage {
  key: number;
  name: string;
  /** As typed: '' for none. */
  dueInHours: string;
  due: DraftDue;
  fields: DraftField[];
}

export interface DraftCondition {
  key: number;
  fieldKey: number;
  op: ConditionOp;
  value: string;
  /** one_of's values; blank ones are left out when sent. */
  values: string[];
}

export interface DraftAction {
  key: number;
  action: RuleAction['action'];
  pageKey: number;
  due: DraftDue;
  assignTo: 'user' | 'field';
  user: string;
  fromFieldKey: number;
}

export interface DraftRule {
  key: number;
  name: string;
  match: 'all' | 'any';
  conditions: DraftCondition[];
  actions: DraftAction[];
}

export interface Draft {
  name: string;
  pages: DraftPage[];
  rules: DraftRule[];
}

let lastKey = 0;
export const newKey = () => ++lastKey;

const text = (n: number | undefined) => (n === undefined ? '' : String(n));

export function newField(field?: TemplateField): DraftField {
  return {
    key: newKey(),
    inputId: field?.inputId ?? '',
    fieldName: field?.fieldName ?? '',
    required: field?.required === true,
    type: field?.type,
    options: (field?.options ?? []).join('\n'),
    min: text(field?.min),
    max: text(field?.max),
    integer: field?.integer === true,
    minLength: text(field?.minLength),
    maxLength: text(field?.maxLength),
    pattern: field?.pattern ?? '',
    default: field?.default ?? '',
    help: field?.help ?? '',
    placeholder: field?.placeholder ?? '',
  };
}

const noDue = (): DraftDue => ({ anchor: '', fieldKey: 0, amount: '', unit: 'days' });

export const newPage = (): DraftPage => ({
  key: newKey(),
  name: '',
  dueInHours: '',
  due: noDue(),
  fields: [newField()],
});

export const newCondition = (fieldKey = 0, type: FieldType = 'text'): DraftCondition => ({
  key: newKey(),
  fieldKey,
  op: opsFor(type)[0]!,
  value: '',
  values: [],
});

export const newAction = (pageKey = 0): DraftAction => ({
  key: newKey(),
  action: 'show_page',
  pageKey,
  due: { anchor: 'step_start', fieldKey: 0, amount: '', unit: 'days' },
  assignTo: 'user',
  user: '',
  fromFieldKey: 0,
});

export const newRule = (fieldKey = 0, type?: FieldType, pageKey = 0): DraftRule => ({
  key: newKey(),
  name: '',
  match: 'all',
  conditions: [newCondition(fieldKey, type)],
  actions: [newAction(pageKey)],
});

/** The draft of a version (for a new version of it), or of a new template. */
export function draftOf(base: WorkflowTemplateDetail | undefined): Draft {
  if (!base) return { name: '', pages: [newPage()], rules: [] };
  const fieldKeys = new Map<string, number>();
  const pageKeys = new Map<string, number>();
  const pages = base.pages.map((page): DraftPage => {
    const fields = page.inputFields.map((field) => {
      const draft = newField(field);
      fieldKeys.set(field.inputId, draft.key);
      return draft;
    });
    const key = newKey();
    pageKeys.set(page.name, key);
    return { key, name: page.name, dueInHours: text(page.dueInHours), due: noDue(), fields };
  });
  const dueOf = (spec: DueSpec): DraftDue => ({
    anchor: spec.anchor,
    fieldKey: spec.field === undefined ? 0 : (fieldKeys.get(spec.field) ?? 0),
    amount: String(spec.amount),
    unit: spec.unit,
  });
  base.pages.forEach((page, p) => {
    if (page.due) pages[p]!.due = dueOf(page.due);
  });
  const rules = (base.rules ?? []).map((rule): DraftRule => {
    const { match, conditions } = conditionsOf(rule);
    return {
      key: newKey(),
      name: rule.name ?? '',
      match,
      conditions: conditions.map((c) => ({
        key: newKey(),
        fieldKey: fieldKeys.get(c.field) ?? 0,
        op: c.op,
        value: c.value ?? '',
        values: c.values ?? [],
      })),
      actions: rule.then.map((a) => {
        const action = newAction(pageKeys.get(a.page) ?? 0);
        action.action = a.action;
        if (a.action === 'set_due' && a.due) action.due = dueOf(a.due);
        if (a.action === 'assign') {
          if (a.fromField !== undefined) {
            action.assignTo = 'field';
            action.fromFieldKey = fieldKeys.get(a.fromField) ?? 0;
          } else {
            action.user = a.user ?? '';
          }
        }
        return action;
      }),
    };
  });
  return { name: base.name, pages, rules };
}

/** The text typed as a number: a number when it is one; otherwise as typed, for the API to name. */
function typed(value: string): Typed | undefined {
  const trimmed = value.trim();
  if (trimmed === '') return undefined;
  const n = Number(trimmed);
  return Number.isFinite(n) ? n : trimmed;
}

/** Only the properties given (an empty one is left out). */
function given<T extends object>(props: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(props).filter(([, v]) => v !== undefined && v !== '' && v !== false),
  ) as Partial<T>;
}

/** Every field of the draft, in page order, with its page's index. */
export function allFields(draft: Draft): Array<{ field: DraftField; page: number }> {
  return draft.pages.flatMap((page, p) => page.fields.map((field) => ({ field, page: p })));
}

/** The limits a field of this type takes, which its inputs show (and only those are sent). */
export function takes(type: FieldType | undefined) {
  const t = type ?? 'text';
  return {
    number: t === 'number',
    text: TEXT_TYPES.includes(t),
    options: t === 'select' || t === 'multi_select',
  };
}

export function optionsOf(field: DraftField): string[] {
  return field.options
    .split('\n')
    .map((o) => o.trim())
    .filter((o) => o !== '');
}

function fieldBody(field: DraftField): FieldBody {
  const t = takes(field.type);
  const options = optionsOf(field);
  return {
    inputId: field.inputId,
    fieldName: field.fieldName,
    ...given({
      required: field.required,
      type: field.type,
      ...(t.number ? { min: typed(field.min), max: typed(field.max), integer: field.integer } : {}),
      ...(t.text
        ? {
            minLength: typed(field.minLength),
            maxLength: typed(field.maxLength),
            pattern: field.pattern,
          }
        : {}),
      options: t.options && options.length ? options : undefined,
      default: field.default,
      help: field.help,
      placeholder: field.placeholder,
    }),
  };
}

export function definitionOf(draft: Draft): DefinitionBody {
  const inputIds = new Map(allFields(draft).map(({ field }) => [field.key, field.inputId]));
  const pageNames = new Map(draft.pages.map((page) => [page.key, page.name]));
  const inputId = (key: number) => inputIds.get(key) ?? '';
  const dueBody = (due: DraftDue): DueBody => ({
    anchor: due.anchor,
    ...(due.anchor === 'field' ? { field: inputId(due.fieldKey) } : {}),
    amount: typed(due.amount) ?? '',
    unit: due.unit,
  });
  const rules = draft.rules.map((rule): RuleBody => ({
    ...given({ name: rule.name }),
    when: {
      [rule.match]: rule.conditions.map((c) => {
        const operand = operandOf(c.op);
        return {
          field: inputId(c.fieldKey),
          op: c.op,
          ...(operand === 'value' ? { value: c.value } : {}),
          ...(operand === 'values' ? { values: c.values.filter((v) => v.trim() !== '') } : {}),
        };
      }),
    } as RuleBody['when'],
    then: rule.actions.map((a): ActionBody => {
      const page = pageNames.get(a.pageKey) ?? '';
      if (a.action === 'set_due') return { action: a.action, page, due: dueBody(a.due) };
      if (a.action === 'assign') {
        return a.assignTo === 'user'
          ? { action: a.action, page, user: a.user }
          : { action: a.action, page, fromField: inputId(a.fromFieldKey) };
      }
      return { action: a.action, page };
    }),
  }));
  return {
    name: draft.name,
    pages: draft.pages.map((page) => {
      const dueInHours = typed(page.dueInHours);
      return {
        name: page.name,
        ...(dueInHours === undefined ? {} : { dueInHours }),
        ...(page.due.anchor === '' ? {} : { due: dueBody(page.due) }),
        inputFields: page.fields.map(fieldBody),
      };
    }),
    ...(rules.length ? { rules } : {}),
  };
}

export function move<T>(items: T[], from: number, to: number): T[] {
  if (to < 0 || to >= items.length) return items;
  const copy = items.slice();
  const [item] = copy.splice(from, 1);
  copy.splice(to, 0, item!);
  return copy;
}
