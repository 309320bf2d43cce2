// The form editor of a template: its name, its pages in order (each with a name, its due time —
// in hours, or relative to the step's or run's start or to a date field — and its input fields,
// each with its type, options, limits, default, help and placeholder), and its rules (built as
// sentences, in rule-builder.tsx) — for a new template, or for a new version of one, prefilled
// from the version it starts from. The form checks nothing itself: the API does, and its
// refusal shows next to the input its `field` (a JSON Pointer into the body) names, or at the
// top when no input of the form is that field or leads to it (editor-inputs.tsx).
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { CreateWorkflowTemplateRequest, WorkflowTemplateDetail } from 'workflow-run-client';
import { fieldOf, messageOf } from '../api.js';
import { FieldInput } from '../field-input.js';
import { TYPE_WORDS } from '../field-types.js';
import { ActionButton, ErrorBanner, useConsole } from '../ui.js';
import { FIELD_TYPES, type FieldType } from '../vocabulary.js';
import {
  CheckInput,
  Group,
  GroupMessage,
  idOf,
  placeOf,
  PlacementContext,
  SelectInput,
  TextInput,
  useMessageAt,
  type Placement,
} from './editor-inputs.js';
import { DueInputs, RuleBuilder } from './rule-builder.js';
import {
  definitionOf,
  draftOf,
  move,
  newField,
  newPage,
  optionsOf,
  takes,
  type Draft,
  type DraftField,
  type DraftPage,
  type DraftRule,
} from './template-draft.js';

const TYPES = FIELD_TYPES.map((type) => [type, TYPE_WORDS[type]] as const);

export function TemplateEditor({
  base,
  onSaved,
  onCancel,
}: {
  /** The version the new one starts from; none for a new template. */
  base?: WorkflowTemplateDetail;
  onSaved(saved: WorkflowTemplateDetail): void;
  onCancel(): void;
}) {
  const { api } = useConsole();
  const [draft, setDraft] = useState<Draft>(() => draftOf(base));
  const [error, setError] = useState<unknown>(undefined);
  const [placement, setPlacement] = useState<Placement | null>(null);
  const [saving, setSaving] = useState(false);
  const form = useRef<HTMLFormElement>(null);

  // A refusal shows at the input it names (found among those rendered now), or at the top;
  // either way it is brought into view, and an input it names takes the focus.
  useLayoutEffect(() => {
    if (!error) {
      setPlacement(null);
      return;
    }
    const pointer = form.current ? placeOf(form.current, fieldOf(error)) : null;
    setPlacement({ message: messageOf(error), pointer });
    requestAnimationFrame(() => {
      const target =
        (pointer &&
          (document.getElementById(idOf(pointer)) ??
            form.current?.querySelector<HTMLElement>(`[data-pointer="${pointer}"]`))) ||
        form.current?.querySelector<HTMLElement>('.banner.error');
      target?.scrollIntoView({ block: 'center' });
      if (
        target instanceof HTMLInputElement ||
        target instanceof HTMLSelectElement ||
        target instanceof HTMLTextAreaElement
      ) {
        target.focus();
      }
    });
  }, [error]);

  /** A change of order or count: the API's pointers no longer name the same inputs. */
  const forgetPlaced = () => {
    if (fieldOf(error)) setError(undefined);
  };
  const setPages = (update: (pages: DraftPage[]) => DraftPage[]) =>
    setDraft((d) => ({ ...d, pages: update(d.pages) }));
  const restructure = (update: (pages: DraftPage[]) => DraftPage[]) => {
    setPages(update);
    forgetPlaced();
  };
  const updatePage = (p: number, change: Partial<DraftPage>) =>
    setPages((all) => all.map((page, i) => (i === p ? { ...page, ...change } : page)));
  const updateField = (p: number, f: number, change: Partial<DraftField>) =>
    setPages((all) =>
      all.map((page, i) =>
        i === p
          ? {
              ...page,
              fields: page.fields.map((field, j) => (j === f ? { ...field, ...change } : field)),
            }
          : page,
      ),
    );
  const restructureFields = (p: number, update: (fields: DraftField[]) => DraftField[]) =>
    restructure((all) =>
      all.map((page, i) => (i === p ? { ...page, fields: update(page.fields) } : page)),
    );
  const setRules = (update: (rules: DraftRule[]) => DraftRule[]) =>
    setDraft((d) => ({ ...d, rules: update(d.rules) }));

  const save = async (event: Event) => {
    event.preventDefault();
    if (saving) return;
    setSaving(true);
    setError(undefined);
    // Numbers go as typed (DefinitionBody): the API refuses a text where a number belongs,
    // naming the input, so the request's own type is the API document's only by assertion.
    const definition = definitionOf(draft) as CreateWorkflowTemplateRequest;
    try {
      const saved = base
        ? await api.updateWorkflowTemplate({
            id: base.id,
            expected_version: base.latestVersion,
            name: definition.name,
            pages: definition.pages,
            ...(definition.rules ? { rules: definition.rules } : {}),
          })
        : await api.createWorkflowTemplate(definition);
      onSaved(saved);
    } catch (caught) {
      setError(caught);
      setSaving(false);
    }
  };

  const { pages } = draft;
  return (
    <PlacementContext.Provider value={placement}>
      <form
        ref={form}
        class="tpl-editor"
        noValidate
        onSubmit={(event) => void save(event)}
        aria-label="Template editor"
      >
        {placement && placement.pointer === null && <ErrorBanner error={error} title="Not saved" />}
        {base && (
          <p class="banner info">
            Starts from version {base.version}; saving makes version {base.latestVersion + 1}
            {base.version !== base.latestVersion && ` (the latest is ${base.latestVersion})`}.
          </p>
        )}
        <div class="panel">
          <TextInput
            pointer="/name"
            label="Template name"
            value={draft.name}
            onInput={(name) => setDraft((d) => ({ ...d, name }))}
          />
        </div>
        <h2 id="tpl-pages-heading">Pages</h2>
        <GroupMessage pointer="/pages" />
        <ol class="tpl-pages" aria-labelledby="tpl-pages-heading" data-pointer="/pages">
          {pages.map((page, p) => (
            <li key={page.key}>
              <PageEditor
                page={page}
                p={p}
                count={pages.length}
                draft={draft}
                updatePage={(change) => updatePage(p, change)}
                updateField={(f, change) => updateField(p, f, change)}
                restructureFields={(update) => restructureFields(p, update)}
                restructure={restructure}
              />
            </li>
          ))}
        </ol>
        <div class="buttons tpl-editor-buttons">
          <button type="button" onClick={() => restructure((all) => [...all, newPage()])}>
            Add a page
          </button>
        </div>
        <RuleBuilder
          draft={draft}
          update={setRules}
          restructure={(update) => {
            setRules(update);
            forgetPlaced();
          }}
        />
        <div class="buttons tpl-editor-buttons">
          <span class="tpl-spacer" />
          <button type="button" onClick={onCancel}>
            Cancel
          </button>
          <ActionButton scope="templates:write" type="submit" class="primary" disabled={saving}>
            {saving ? 'Saving…' : base ? 'Save as a new version' : 'Create template'}
          </ActionButton>
        </div>
      </form>
    </PlacementContext.Provider>
  );
}

function PageEditor({
  page,
  p,
  count,
  draft,
  updatePage,
  updateField,
  restructureFields,
  restructure,
}: {
  page: DraftPage;
  p: number;
  count: number;
  draft: Draft;
  updatePage(change: Partial<DraftPage>): void;
  updateField(f: number, change: Partial<DraftField>): void;
  restructureFields(update: (fields: DraftField[]) => DraftField[]): void;
  restructure(update: (pages: DraftPage[]) => DraftPage[]): void;
}) {
  const n = p + 1;
  const pointer = `/pages/${p}`;
  const fieldsPointer = `${pointer}/inputFields`;
  return (
    <fieldset class="panel tpl-page" data-pointer={pointer}>
      <legend>Page {n}</legend>
      <GroupMessage pointer={pointer} />
      <div class="tpl-page-head">
        <TextInput
          pointer={`${pointer}/name`}
          prefix={`Page ${n}: `}
          label="Name"
          value={page.name}
          onInput={(name) => updatePage({ name })}
        />
        <TextInput
          pointer={`${pointer}/dueInHours`}
          prefix={`Page ${n}: `}
          label="Due in hours (optional)"
          inputMode="decimal"
          value={page.dueInHours}
          onInput={(dueInHours) => updatePage({ dueInHours })}
        />
      </div>
      <Group
        pointer={`${pointer}/due`}
        legend={
          <>
            <span class="tpl-sr">Page {n}: </span>Relative due time (instead of hours)
          </>
        }
        class="tpl-due-group"
      >
        <DueInputs
          pointer={`${pointer}/due`}
          prefix={`Page ${n}: `}
          due={page.due}
          draft={draft}
          optional
          onChange={(change) => updatePage({ due: { ...page.due, ...change } })}
        />
      </Group>
      <h3 class="tpl-fields-heading">Input fields</h3>
      <GroupMessage pointer={fieldsPointer} />
      {page.fields.length === 0 && <p class="muted">No input fields on this page.</p>}
      <ol class="tpl-fields" data-pointer={fieldsPointer}>
        {page.fields.map((field, f) => (
          <FieldEditor
            key={field.key}
            field={field}
            pointer={`${fieldsPointer}/${f}`}
            where={`Page ${n}, field ${f + 1}: `}
            name={`page ${n}, field ${f + 1}`}
            first={f === 0}
            last={f === page.fields.length - 1}
            update={(change) => updateField(f, change)}
            restructure={(update) => restructureFields((all) => update(all, f))}
          />
        ))}
      </ol>
      <div class="tpl-page-actions">
        <button type="button" onClick={() => restructureFields((all) => [...all, newField()])}>
          Add a field<span class="tpl-sr"> to page {n}</span>
        </button>
        <span class="tpl-moves">
          <button
            type="button"
            disabled={p === 0}
            onClick={() => restructure((all) => move(all, p, p - 1))}
          >
            Move page<span class="tpl-sr">{` ${n}`}</span> up
          </button>
          <button
            type="button"
            disabled={p === count - 1}
            onClick={() => restructure((all) => move(all, p, p + 1))}
          >
            Move page<span class="tpl-sr">{` ${n}`}</span> down
          </button>
          <button type="button" onClick={() => restructure((all) => all.filter((_, i) => i !== p))}>
            Remove page<span class="tpl-sr">{` ${n}`}</span>
          </button>
        </span>
      </div>
    </fieldset>
  );
}

function FieldEditor({
  field,
  pointer,
  where,
  name,
  first,
  last,
  update,
  restructure,
}: {
  field: DraftField;
  pointer: string;
  /** "Page 1, field 2: ", read before each label. */
  where: string;
  /** "page 1, field 2", read in the buttons' names. */
  name: string;
  first: boolean;
  last: boolean;
  update(change: Partial<DraftField>): void;
  restructure(update: (fields: DraftField[], f: number) => DraftField[]): void;
}) {
  const t = takes(field.type);
  const defaultPointer = `${pointer}/default`;
  const defaultMessage = useMessageAt(defaultPointer);
  return (
    <li class="tpl-field" data-pointer={pointer}>
      <TextInput
        pointer={`${pointer}/inputId`}
        prefix={where}
        label="Input id"
        value={field.inputId}
        onInput={(inputId) => update({ inputId })}
      />
      <TextInput
        pointer={`${pointer}/fieldName`}
        prefix={where}
        label="Field name"
        value={field.fieldName}
        onInput={(fieldName) => update({ fieldName })}
      />
      <div class="tpl-field-tail">
        <CheckInput
          pointer={`${pointer}/required`}
          prefix={where}
          label="Required"
          checked={field.required}
          onChange={(required) => update({ required })}
        />
        <span class="tpl-moves">
          <button
            type="button"
            disabled={first}
            onClick={() => restructure((all, f) => move(all, f, f - 1))}
          >
            Move<span class="tpl-sr">{` ${name}`}</span> up
          </button>
          <button
            type="button"
            disabled={last}
            onClick={() => restructure((all, f) => move(all, f, f + 1))}
          >
            Move<span class="tpl-sr">{` ${name}`}</span> down
          </button>
          <button
            type="button"
            onClick={() => restructure((all, f) => all.filter((_, j) => j !== f))}
          >
            Remove<span class="tpl-sr">{` ${name}`}</span>
          </button>
        </span>
      </div>
      <div class="tpl-field-more">
        <SelectInput
          pointer={`${pointer}/type`}
          prefix={where}
          label="Type"
          value={field.type ?? 'text'}
          options={TYPES}
          onChange={(type: FieldType) => update({ type })}
        />
        {t.options && (
          <TextInput
            pointer={`${pointer}/options`}
            prefix={where}
            label="Options, one per line"
            multiline
            value={field.options}
            onInput={(options) => update({ options })}
          />
        )}
        {t.number && (
          <>
            <TextInput
              pointer={`${pointer}/min`}
              prefix={where}
              label="Minimum"
              inputMode="decimal"
              value={field.min}
              onInput={(min) => update({ min })}
            />
            <TextInput
              pointer={`${pointer}/max`}
              prefix={where}
              label="Maximum"
              inputMode="decimal"
              value={field.max}
              onInput={(max) => update({ max })}
            />
            <CheckInput
              pointer={`${pointer}/integer`}
              prefix={where}
              label="Whole numbers only"
              checked={field.integer}
              onChange={(integer) => update({ integer })}
            />
          </>
        )}
        {t.text && (
          <>
            <TextInput
              pointer={`${pointer}/minLength`}
              prefix={where}
              label="Minimum length"
              inputMode="numeric"
              value={field.minLength}
              onInput={(minLength) => update({ minLength })}
            />
            <TextInput
              pointer={`${pointer}/maxLength`}
              prefix={where}
              label="Maximum length"
              inputMode="numeric"
              value={field.maxLength}
              onInput={(maxLength) => update({ maxLength })}
            />
            <TextInput
              pointer={`${pointer}/pattern`}
              prefix={where}
              label="Pattern"
              help="RE2: the whole value must match"
              value={field.pattern}
              onInput={(pattern) => update({ pattern })}
            />
          </>
        )}
        <FieldInput
          id={idOf(defaultPointer)}
          anchor={defaultPointer}
          label={
            <>
              <span class="tpl-sr">{where}</span>Default
            </>
          }
          field={{ type: field.type, options: optionsOf(field) }}
          value={field.default}
          message={defaultMessage}
          onValue={(value) => update({ default: value })}
        />
        <TextInput
          pointer={`${pointer}/placeholder`}
          prefix={where}
          label="Placeholder"
          value={field.placeholder}
          onInput={(placeholder) => update({ placeholder })}
        />
        <TextInput
          pointer={`${pointer}/help`}
          prefix={where}
          label="Help text"
          value={field.help}
          onInput={(help) => update({ help })}
        />
      </div>
      <GroupMessage pointer={pointer} />
    </li>
  );
}
