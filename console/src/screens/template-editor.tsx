// The form editor of a template: its name, its pages in order (each with a name, an optional
// due time and its input fields) — for a new template, or for a new version of one, prefilled
// from the version it starts from. The form checks nothing itself: the API does, and its
// refusal shows next to the input its `field` (a JSON Pointer into the body) names, or at the
// top when no input of the form is that field.
import { useState } from 'preact/hooks';
import { ApiError } from '../api.js';
import type { TemplateDefinition, TemplateDetail, TemplateField } from '../types-templates.js';
import {
  ActionButton,
  ErrorBanner,
  FieldMessage,
  fieldError,
  namesField,
  useConsole,
} from '../ui.js';

interface DraftField {
  key: number;
  inputId: string;
  fieldName: string;
  required: boolean;
}

interface DraftPage {
  key: number;
  name: string;
  /** As typed: '' for none. */
  due: string;
  fields: DraftField[];
}

let nextKey = 0;
const newField = (field?: TemplateField): DraftField => ({
  key: ++nextKey,
  inputId: field?.inputId ?? '',
  fieldName: field?.fieldName ?? '',
  required: field?.required === true,
});
const newPage = (): DraftPage => ({ key: ++nextKey, name: '', due: '', fields: [newField()] });

function draftOf(base: TemplateDetail | undefined): { name: string; pages: DraftPage[] } {
  if (!base) return { name: '', pages: [newPage()] };
  return {
    name: base.name,
    pages: base.pages.map((page) => ({
      key: ++nextKey,
      name: page.name,
      due: page.dueInHours === undefined ? '' : String(page.dueInHours),
      fields: page.inputFields.map(newField),
    })),
  };
}

/** The text typed as due hours: a number when it is one; otherwise as typed, for the API to name. */
function dueOf(text: string): number | string | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : trimmed;
}

function definitionOf(name: string, pages: DraftPage[]): TemplateDefinition {
  return {
    name,
    pages: pages.map((page) => {
      const due = dueOf(page.due);
      return {
        name: page.name,
        ...(due === undefined ? {} : { dueInHours: due }),
        inputFields: page.fields.map((field) => ({
          inputId: field.inputId,
          fieldName: field.fieldName,
          ...(field.required ? { required: true } : {}),
        })),
      };
    }),
  };
}

function move<T>(items: T[], from: number, to: number): T[] {
  if (to < 0 || to >= items.length) return items;
  const copy = items.slice();
  const [item] = copy.splice(from, 1);
  copy.splice(to, 0, item!);
  return copy;
}

/** The pointers of the inputs a form of these pages shows (an error naming one shows there). */
function shownFields(pages: DraftPage[]): Set<string> {
  const shown = new Set(['/name', '/pages']);
  pages.forEach((page, p) => {
    for (const part of ['name', 'dueInHours', 'inputFields']) shown.add(`/pages/${p}/${part}`);
    page.fields.forEach((_, f) => {
      for (const part of ['inputId', 'fieldName', 'required'])
        shown.add(`/pages/${p}/inputFields/${f}/${part}`);
    });
  });
  return shown;
}

/** Ids for an input and its message, from its pointer. */
const idOf = (pointer: string) => `tpl${pointer.replace(/\//g, '-')}`;

/** A labelled text input tied to the API's message for its pointer. */
function TextInput({
  pointer,
  label,
  prefix,
  value,
  error,
  onInput,
  inputMode,
}: {
  pointer: string;
  /** The visible label. */
  label: string;
  /** Read before the label by assistive technology only ("Page 1, field 2: "). */
  prefix?: string;
  value: string;
  error: unknown;
  onInput(value: string): void;
  inputMode?: 'decimal';
}) {
  const message = fieldError(error, pointer);
  const id = idOf(pointer);
  return (
    <div class="field">
      <label for={id}>
        {prefix && <span class="tpl-sr">{prefix}</span>}
        {label}
      </label>
      <input
        id={id}
        type="text"
        inputMode={inputMode}
        value={value}
        aria-invalid={message ? true : undefined}
        aria-describedby={message ? `${id}-error` : undefined}
        onInput={(event) => onInput(event.currentTarget.value)}
      />
      <FieldMessage id={`${id}-error`} message={message} />
    </div>
  );
}

export function TemplateEditor({
  base,
  onSaved,
  onCancel,
}: {
  /** The version the new one starts from; none for a new template. */
  base?: TemplateDetail;
  onSaved(saved: TemplateDetail): void;
  onCancel(): void;
}) {
  const { api } = useConsole();
  const [initial] = useState(() => draftOf(base));
  const [name, setName] = useState(initial.name);
  const [pages, setPages] = useState<DraftPage[]>(initial.pages);
  const [error, setError] = useState<unknown>(undefined);
  const [saving, setSaving] = useState(false);

  /** A change of order or count: the API's pointers no longer name the same inputs. */
  const restructure = (update: (pages: DraftPage[]) => DraftPage[]) => {
    setPages(update);
    if (error instanceof ApiError && error.field?.startsWith('/pages')) setError(undefined);
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

  const save = async (event: Event) => {
    event.preventDefault();
    if (saving) return;
    setSaving(true);
    setError(undefined);
    const definition = definitionOf(name, pages);
    try {
      const saved = base
        ? await api.post<TemplateDetail>('/update-workflow-template', {
            id: base.id,
            expected_version: base.latestVersion,
            name: definition.name,
            pages: definition.pages,
          })
        : await api.post<TemplateDetail>('/create-workflow-template', definition);
      onSaved(saved);
    } catch (caught) {
      setError(caught);
      setSaving(false);
      // The message next to its input, or at the top: bring it into view.
      requestAnimationFrame(() => {
        const pointer = caught instanceof ApiError ? caught.field : undefined;
        const target =
          (pointer && document.getElementById(idOf(pointer))) ||
          document.querySelector<HTMLElement>('.tpl-editor .banner.error');
        target?.scrollIntoView({ block: 'center' });
        if (target instanceof HTMLInputElement) target.focus();
      });
    }
  };

  const shown = shownFields(pages);
  const topError = error && !namesField(error, (f) => shown.has(f)) ? error : undefined;

  return (
    <form class="tpl-editor" noValidate onSubmit={save} aria-label="Template editor">
      <ErrorBanner error={topError} title="Not saved" />
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
          value={name}
          error={error}
          onInput={setName}
        />
      </div>
      <h2 id="tpl-pages-heading">Pages</h2>
      <FieldMessage id="tpl-pages-error" message={fieldError(error, '/pages')} />
      <ol class="tpl-pages" aria-labelledby="tpl-pages-heading">
        {pages.map((page, p) => {
          const n = p + 1;
          const fieldsPointer = `/pages/${p}/inputFields`;
          return (
            <li key={page.key}>
              <fieldset class="panel tpl-page">
                <legend>Page {n}</legend>
                <div class="tpl-page-head">
                  <TextInput
                    pointer={`/pages/${p}/name`}
                    prefix={`Page ${n}: `}
                    label="Name"
                    value={page.name}
                    error={error}
                    onInput={(value) => updatePage(p, { name: value })}
                  />
                  <TextInput
                    pointer={`/pages/${p}/dueInHours`}
                    prefix={`Page ${n}: `}
                    label="Due in hours (optional)"
                    inputMode="decimal"
                    value={page.due}
                    error={error}
                    onInput={(value) => updatePage(p, { due: value })}
                  />
                </div>
                <h3 class="tpl-fields-heading">Input fields</h3>
                <FieldMessage
                  id={`${idOf(fieldsPointer)}-error`}
                  message={fieldError(error, fieldsPointer)}
                />
                {page.fields.length === 0 && <p class="muted">No input fields on this page.</p>}
                <ol class="tpl-fields">
                  {page.fields.map((field, f) => {
                    const m = f + 1;
                    const where = `Page ${n}, field ${m}: `;
                    const pointer = `${fieldsPointer}/${f}`;
                    return (
                      <li key={field.key} class="tpl-field">
                        <TextInput
                          pointer={`${pointer}/inputId`}
                          prefix={where}
                          label="Input id"
                          value={field.inputId}
                          error={error}
                          onInput={(value) => updateField(p, f, { inputId: value })}
                        />
                        <TextInput
                          pointer={`${pointer}/fieldName`}
                          prefix={where}
                          label="Field name"
                          value={field.fieldName}
                          error={error}
                          onInput={(value) => updateField(p, f, { fieldName: value })}
                        />
                        <div class="tpl-field-tail">
                          <label class="check">
                            <input
                              type="checkbox"
                              checked={field.required}
                              onChange={(event) =>
                                updateField(p, f, { required: event.currentTarget.checked })
                              }
                            />
                            <span class="tpl-sr">{where}</span>Required
                          </label>
                          <FieldMessage
                            id={`${idOf(`${pointer}/required`)}-error`}
                            message={fieldError(error, `${pointer}/required`)}
                          />
                          <span class="tpl-moves">
                            <button
                              type="button"
                              disabled={f === 0}
                              onClick={() => restructureFields(p, (all) => move(all, f, f - 1))}
                            >
                              Move<span class="tpl-sr">{` page ${n}, field ${m}`}</span> up
                            </button>
                            <button
                              type="button"
                              disabled={f === page.fields.length - 1}
                              onClick={() => restructureFields(p, (all) => move(all, f, f + 1))}
                            >
                              Move<span class="tpl-sr">{` page ${n}, field ${m}`}</span> down
                            </button>
                            <button
                              type="button"
                              onClick={() =>
                                restructureFields(p, (all) => all.filter((_, j) => j !== f))
                              }
                            >
                              Remove<span class="tpl-sr">{` page ${n}, field ${m}`}</span>
                            </button>
                          </span>
                        </div>
                      </li>
                    );
                  })}
                </ol>
                <div class="tpl-page-actions">
                  <button
                    type="button"
                    onClick={() => restructureFields(p, (all) => [...all, newField()])}
                  >
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
                      disabled={p === pages.length - 1}
                      onClick={() => restructure((all) => move(all, p, p + 1))}
                    >
                      Move page<span class="tpl-sr">{` ${n}`}</span> down
                    </button>
                    <button
                      type="button"
                      onClick={() => restructure((all) => all.filter((_, i) => i !== p))}
                    >
                      Remove page<span class="tpl-sr">{` ${n}`}</span>
                    </button>
                  </span>
                </div>
              </fieldset>
            </li>
          );
        })}
      </ol>
      <div class="buttons tpl-editor-buttons">
        <button type="button" onClick={() => restructure((all) => [...all, newPage()])}>
          Add a page
        </button>
        <span class="tpl-spacer" />
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <ActionButton scope="templates:write" type="submit" class="primary" disabled={saving}>
          {saving ? 'Saving…' : base ? 'Save as a new version' : 'Create template'}
        </ActionButton>
      </div>
    </form>
  );
}
