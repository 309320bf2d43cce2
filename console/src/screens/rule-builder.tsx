// The rules of a template, built as sentences: "When [Amount] [is greater than] [10000] then
// [show page] [Finance review]". Each condition tests a field with the tests its type takes,
// against a value typed as the field is (a date picker for a date, the options of a select);
// each action shows or hides a page, sets its due time or assigns its step. Rules, conditions
// and actions are added, removed and (rules) moved; the API checks the rest and its refusal
// shows at the input it names. Also the due time inputs, which a page and a rule share.
import { FieldInput } from '../field-input.js';
import { listOf, operandOf, opsFor, opWords } from '../field-types.js';
import type { ConditionOp, DueAnchor, DueUnit, FieldType } from '../vocabulary.js';
import {
  Group,
  GroupMessage,
  idOf,
  SelectInput,
  TextInput,
  useMessageAt,
} from './editor-inputs.js';
import {
  allFields,
  move,
  newAction,
  newCondition,
  newRule,
  optionsOf,
  type Draft,
  type DraftAction,
  type DraftCondition,
  type DraftDue,
  type DraftField,
  type DraftRule,
} from './template-draft.js';

const UNITS: ReadonlyArray<readonly [DueUnit, string]> = [
  ['hours', 'hours'],
  ['days', 'days'],
  ['business_days', 'business days (Mon–Fri)'],
];

const fieldWords = (field: DraftField) => field.fieldName || field.inputId || 'unnamed field';

/** The fields to choose from (those `fits` takes, and the one chosen whatever it is). */
function fieldChoices(
  draft: Draft,
  chosen: number,
  fits: (field: DraftField) => boolean = () => true,
): Array<readonly [string, string]> {
  return [
    ['0', '— choose a field —'],
    ...allFields(draft)
      .filter(({ field }) => field.key === chosen || fits(field))
      .map(({ field }) => [String(field.key), fieldWords(field)] as const),
  ];
}

function pageChoices(draft: Draft): Array<readonly [string, string]> {
  return [
    ['0', '— choose a page —'],
    ...draft.pages.map((page, p) => [String(page.key), page.name || `page ${p + 1}`] as const),
  ];
}

const isDated = (field: DraftField) => field.type === 'date' || field.type === 'datetime';

/**
 * A due time's inputs. On a page (`optional`): counted from none, the step's start, the run's
 * start or a date field, then the amount and unit. In a rule's sentence: "[3] [days] after
 * [the step starts]".
 */
export function DueInputs({
  pointer,
  prefix,
  due,
  draft,
  optional,
  onChange,
}: {
  pointer: string;
  prefix: string;
  due: DraftDue;
  draft: Draft;
  optional?: boolean;
  onChange(change: Partial<DraftDue>): void;
}) {
  const anchors: Array<readonly [DueAnchor | '', string]> = optional
    ? [
        ['', 'no relative due time'],
        ['step_start', "the step's start"],
        ['run_start', "the run's start"],
        ['field', 'a date field'],
      ]
    : [
        ['step_start', 'after the step starts'],
        ['run_start', 'after the run starts'],
        ['field', 'after the date in'],
      ];
  const anchor = (
    <SelectInput
      pointer={`${pointer}/anchor`}
      prefix={prefix}
      label="Due counted from"
      hideLabel={!optional}
      value={due.anchor}
      options={anchors}
      onChange={(value) => onChange({ anchor: value })}
    />
  );
  const field = due.anchor === 'field' && (
    <SelectInput
      pointer={`${pointer}/field`}
      prefix={prefix}
      label="Due date field"
      hideLabel={!optional}
      value={String(due.fieldKey)}
      options={fieldChoices(draft, due.fieldKey, isDated)}
      onChange={(value) => onChange({ fieldKey: Number(value) })}
    />
  );
  const amounts = due.anchor !== '' && (
    <>
      <TextInput
        pointer={`${pointer}/amount`}
        prefix={prefix}
        label={optional ? 'Due amount (negative: before)' : 'Due amount'}
        hideLabel={!optional}
        class="tpl-amount"
        inputMode="decimal"
        value={due.amount}
        onInput={(value) => onChange({ amount: value })}
      />
      <SelectInput
        pointer={`${pointer}/unit`}
        prefix={prefix}
        label="Due unit"
        hideLabel={!optional}
        value={due.unit}
        options={UNITS}
        onChange={(value) => onChange({ unit: value })}
      />
    </>
  );
  return optional ? (
    <div class="tpl-due">
      {anchor}
      {field}
      {amounts}
    </div>
  ) : (
    <>
      {amounts}
      {anchor}
      {field}
    </>
  );
}

/** A condition's value, typed as its field is. */
function ConditionValue({
  pointer,
  prefix,
  condition,
  field,
  onChange,
}: {
  pointer: string;
  prefix: string;
  condition: DraftCondition;
  field: DraftField | undefined;
  onChange(change: Partial<DraftCondition>): void;
}) {
  const operand = operandOf(condition.op);
  const type: FieldType = field?.type ?? 'text';
  const options = field ? optionsOf(field) : [];
  const valuePointer = `${pointer}/value`;
  const valuesPointer = `${pointer}/values`;
  const valueMessage = useMessageAt(valuePointer);
  const valuesMessage = useMessageAt(valuesPointer);
  if (operand === 'none') return null;
  if (operand === 'value') {
    if (type === 'checkbox') {
      return (
        <SelectInput
          pointer={valuePointer}
          prefix={prefix}
          label="Value"
          hideLabel
          value={condition.value}
          options={[
            ['', '— choose —'],
            ['true', 'checked'],
            ['false', 'not checked'],
          ]}
          onChange={(value) => onChange({ value })}
        />
      );
    }
    return (
      <FieldInput
        id={idOf(valuePointer)}
        anchor={valuePointer}
        class="tpl-value"
        label={`${prefix}Value`}
        hideLabel
        field={{
          type: type === 'multi_select' && condition.op === 'contains' ? 'select' : type,
          options,
        }}
        value={condition.value}
        message={valueMessage}
        onValue={(value) => onChange({ value })}
      />
    );
  }
  if (type === 'select' || type === 'multi_select' || type === 'checkbox') {
    return (
      <FieldInput
        id={idOf(valuesPointer)}
        anchor={valuesPointer}
        class="tpl-value"
        label={`${prefix}Values`}
        hideLabel
        field={{ type: 'multi_select', options: type === 'checkbox' ? ['true', 'false'] : options }}
        value={JSON.stringify(condition.values)}
        message={valuesMessage}
        onValue={(value) => onChange({ values: listOf(value) })}
      />
    );
  }
  return (
    <TextInput
      pointer={valuesPointer}
      prefix={prefix}
      label="Values, one per line"
      hideLabel
      class="tpl-value"
      multiline
      placeholder="one value per line"
      value={condition.values.join('\n')}
      onInput={(value) => onChange({ values: value.split('\n') })}
    />
  );
}

function ConditionRow({
  r,
  j,
  rule,
  condition,
  draft,
  onChange,
  onRemove,
}: {
  r: number;
  j: number;
  rule: DraftRule;
  condition: DraftCondition;
  draft: Draft;
  onChange(change: Partial<DraftCondition>): void;
  onRemove(): void;
}) {
  const pointer = `/rules/${r}/when/${rule.match}/${j}`;
  const prefix = `Rule ${r + 1}, condition ${j + 1}: `;
  const field = allFields(draft).find((f) => f.field.key === condition.fieldKey)?.field;
  const type: FieldType = field?.type ?? 'text';
  const ops = opsFor(type);
  const shownOps: ConditionOp[] = ops.includes(condition.op) ? ops : [...ops, condition.op];
  const word = j === 0 ? 'When' : rule.match === 'all' ? 'and' : 'or';
  return (
    <li class="tpl-sentence" data-pointer={pointer}>
      <span class="tpl-word" aria-hidden="true">
        {word}
      </span>
      <SelectInput
        pointer={`${pointer}/field`}
        prefix={prefix}
        label="Field"
        hideLabel
        value={String(condition.fieldKey)}
        options={fieldChoices(draft, condition.fieldKey)}
        onChange={(value) => {
          const key = Number(value);
          const next = allFields(draft).find((f) => f.field.key === key)?.field;
          const nextOps = opsFor(next?.type ?? 'text');
          const keepOp = nextOps.includes(condition.op);
          onChange({
            fieldKey: key,
            ...(keepOp && next?.type === type
              ? {}
              : { op: keepOp ? condition.op : nextOps[0]!, value: '', values: [] }),
          });
        }}
      />
      <SelectInput
        pointer={`${pointer}/op`}
        prefix={prefix}
        label="Test"
        hideLabel
        value={condition.op}
        options={shownOps.map((op) => [op, opWords(op, type)] as const)}
        onChange={(op) => onChange({ op })}
      />
      <ConditionValue
        pointer={pointer}
        prefix={prefix}
        condition={condition}
        field={field}
        onChange={onChange}
      />
      <button type="button" class="tpl-remove" onClick={onRemove}>
        Remove<span class="tpl-sr">{` rule ${r + 1}, condition ${j + 1}`}</span>
      </button>
      <GroupMessage pointer={pointer} />
    </li>
  );
}

const ACTIONS: ReadonlyArray<readonly [DraftAction['action'], string]> = [
  ['show_page', 'show page'],
  ['hide_page', 'hide page'],
  ['set_due', 'set the due time of'],
  ['assign', 'assign'],
];

function ActionRow({
  r,
  k,
  action,
  draft,
  onChange,
  onRemove,
}: {
  r: number;
  k: number;
  action: DraftAction;
  draft: Draft;
  onChange(change: Partial<DraftAction>): void;
  onRemove(): void;
}) {
  const pointer = `/rules/${r}/then/${k}`;
  const prefix = `Rule ${r + 1}, action ${k + 1}: `;
  return (
    <li class="tpl-sentence" data-pointer={pointer}>
      <span class="tpl-word" aria-hidden="true">
        {k === 0 ? 'then' : 'and'}
      </span>
      <SelectInput
        pointer={`${pointer}/action`}
        prefix={prefix}
        label="Action"
        hideLabel
        value={action.action}
        options={ACTIONS}
        onChange={(value) => onChange({ action: value })}
      />
      <SelectInput
        pointer={`${pointer}/page`}
        prefix={prefix}
        label="Page"
        hideLabel
        value={String(action.pageKey)}
        options={pageChoices(draft)}
        onChange={(value) => onChange({ pageKey: Number(value) })}
      />
      {action.action === 'set_due' && (
        <>
          <span class="tpl-word" aria-hidden="true">
            to
          </span>
          <DueInputs
            pointer={`${pointer}/due`}
            prefix={prefix}
            due={action.due}
            draft={draft}
            onChange={(change) => onChange({ due: { ...action.due, ...change } })}
          />
        </>
      )}
      {action.action === 'assign' && (
        <>
          <span class="tpl-word" aria-hidden="true">
            to
          </span>
          <SelectInput
            pointer={`${pointer}/to`}
            prefix={prefix}
            label="Assign to"
            hideLabel
            value={action.assignTo}
            options={[
              ['user', 'the user'],
              ['field', 'the value of'],
            ]}
            onChange={(value) => onChange({ assignTo: value })}
          />
          {action.assignTo === 'user' ? (
            <TextInput
              pointer={`${pointer}/user`}
              prefix={prefix}
              label="User id"
              hideLabel
              placeholder="user id"
              value={action.user}
              onInput={(value) => onChange({ user: value })}
            />
          ) : (
            <SelectInput
              pointer={`${pointer}/fromField`}
              prefix={prefix}
              label="Assignee field"
              hideLabel
              value={String(action.fromFieldKey)}
              options={fieldChoices(draft, action.fromFieldKey)}
              onChange={(value) => onChange({ fromFieldKey: Number(value) })}
            />
          )}
        </>
      )}
      <button type="button" class="tpl-remove" onClick={onRemove}>
        Remove<span class="tpl-sr">{` rule ${r + 1}, action ${k + 1}`}</span>
      </button>
      <GroupMessage pointer={pointer} />
    </li>
  );
}

function RuleEditor({
  r,
  rule,
  count,
  draft,
  update,
  restructure,
}: {
  r: number;
  rule: DraftRule;
  count: number;
  draft: Draft;
  /** A change of this rule's values. */
  update(change: Partial<DraftRule>): void;
  /** A change of the rules' count or order, or of this rule's conditions' or actions'. */
  restructure(change: (rules: DraftRule[]) => DraftRule[]): void;
}) {
  const n = r + 1;
  const pointer = `/rules/${r}`;
  const setCondition = (j: number, change: Partial<DraftCondition>) =>
    update({
      conditions: rule.conditions.map((c, i) => (i === j ? { ...c, ...change } : c)),
    });
  const setAction = (k: number, change: Partial<DraftAction>) =>
    update({ actions: rule.actions.map((a, i) => (i === k ? { ...a, ...change } : a)) });
  const restructureRule = (change: Partial<DraftRule>) =>
    restructure((all) => all.map((x, i) => (i === r ? { ...x, ...change } : x)));
  const first = allFields(draft)[0]?.field;
  return (
    <Group pointer={pointer} legend={`Rule ${n}`} class="panel tpl-rule">
      <TextInput
        pointer={`${pointer}/name`}
        prefix={`Rule ${n}: `}
        label="Name (optional, shown in the runs' history)"
        class="tpl-rule-name"
        value={rule.name}
        onInput={(value) => update({ name: value })}
      />
      <div data-pointer={`${pointer}/when`}>
        <ol class="tpl-sentences" data-pointer={`${pointer}/when/${rule.match}`}>
          {rule.conditions.map((condition, j) => (
            <ConditionRow
              key={condition.key}
              r={r}
              j={j}
              rule={rule}
              condition={condition}
              draft={draft}
              onChange={(change) => setCondition(j, change)}
              onRemove={() =>
                restructureRule({ conditions: rule.conditions.filter((_, i) => i !== j) })
              }
            />
          ))}
        </ol>
        <GroupMessage pointer={`${pointer}/when/${rule.match}`} />
        <GroupMessage pointer={`${pointer}/when`} />
        <div class="tpl-rule-adds">
          <button
            type="button"
            onClick={() =>
              restructureRule({
                conditions: [...rule.conditions, newCondition(first?.key, first?.type)],
              })
            }
          >
            Add a condition<span class="tpl-sr"> to rule {n}</span>
          </button>
          {rule.conditions.length > 1 && (
            <SelectInput
              pointer={`${pointer}/match`}
              prefix={`Rule ${n}: `}
              label="Conditions"
              class="tpl-match"
              value={rule.match}
              options={[
                ['all', 'all must hold (and)'],
                ['any', 'any one is enough (or)'],
              ]}
              onChange={(match) => restructureRule({ match })}
            />
          )}
        </div>
      </div>
      <div data-pointer={`${pointer}/then`}>
        <ol class="tpl-sentences">
          {rule.actions.map((action, k) => (
            <ActionRow
              key={action.key}
              r={r}
              k={k}
              action={action}
              draft={draft}
              onChange={(change) => setAction(k, change)}
              onRemove={() => restructureRule({ actions: rule.actions.filter((_, i) => i !== k) })}
            />
          ))}
        </ol>
        <GroupMessage pointer={`${pointer}/then`} />
        <div class="tpl-rule-adds">
          <button
            type="button"
            onClick={() =>
              restructureRule({
                actions: [...rule.actions, newAction(draft.pages.at(-1)?.key)],
              })
            }
          >
            Add an action<span class="tpl-sr"> to rule {n}</span>
          </button>
        </div>
      </div>
      <div class="tpl-moves tpl-rule-moves">
        <button
          type="button"
          disabled={r === 0}
          onClick={() => restructure((all) => move(all, r, r - 1))}
        >
          Move rule<span class="tpl-sr">{` ${n}`}</span> up
        </button>
        <button
          type="button"
          disabled={r === count - 1}
          onClick={() => restructure((all) => move(all, r, r + 1))}
        >
          Move rule<span class="tpl-sr">{` ${n}`}</span> down
        </button>
        <button type="button" onClick={() => restructure((all) => all.filter((_, i) => i !== r))}>
          Remove rule<span class="tpl-sr">{` ${n}`}</span>
        </button>
      </div>
    </Group>
  );
}

/** The rules section of the editor. */
export function RuleBuilder({
  draft,
  update,
  restructure,
}: {
  draft: Draft;
  update(change: (rules: DraftRule[]) => DraftRule[]): void;
  restructure(change: (rules: DraftRule[]) => DraftRule[]): void;
}) {
  const first = allFields(draft)[0]?.field;
  return (
    <section class="tpl-rules" aria-labelledby="tpl-rules-heading" data-pointer="/rules">
      <h2 id="tpl-rules-heading">Rules</h2>
      <p class="muted">
        A rule decides, from the values known when a run reaches a page, whether the page is shown,
        when its step falls due and who it is assigned to. It can test only fields of earlier pages.
        A page named by a &ldquo;show page&rdquo; action is skipped unless one of those rules
        applies; where two rules decide the same thing, the later one wins.
      </p>
      <GroupMessage pointer="/rules" />
      {draft.rules.length === 0 && <p class="muted">No rules: every page is shown.</p>}
      <ol class="tpl-rule-list">
        {draft.rules.map((rule, r) => (
          <li key={rule.key}>
            <RuleEditor
              r={r}
              rule={rule}
              count={draft.rules.length}
              draft={draft}
              update={(change) =>
                update((all) => all.map((x, i) => (i === r ? { ...x, ...change } : x)))
              }
              restructure={restructure}
            />
          </li>
        ))}
      </ol>
      <div class="buttons tpl-editor-buttons">
        <button
          type="button"
          onClick={() =>
            restructure((all) => [
              ...all,
              newRule(first?.key, first?.type, draft.pages.at(-1)?.key),
            ])
          }
        >
          Add a rule
        </button>
      </div>
    </section>
  );
}
