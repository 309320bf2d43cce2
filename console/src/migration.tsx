// Moving runs onto another version of their template, as the run screen and the bulk actions
// screen both show it: a template's versions, the page map between two versions side by side
// (each page of the version moved from, with the page of the target it becomes, and the
// target's pages with where each comes from), and what a move did or would do, in words. The
// API decides: its refusals show under the page or field they name.
import type { WorkflowTemplateDetail, WorkflowTemplateVersion } from 'workflow-run-client';
import { fieldOf, messageOf } from './api.js';
import { FieldMessage, fieldError, Time, useLoad, type Loaded } from './ui.js';
import type { Migration, PageMap, TemplatePage } from './vocabulary.js';

/** A template's versions, newest first (those of one page of 100: far more than a template has). */
export function useVersions(templateId: string | undefined): Loaded<WorkflowTemplateVersion[]> {
  return useLoad(
    (api) =>
      templateId
        ? api
            .page('getWorkflowTemplateVersions', { id: templateId, limit: 100 })
            .then((page) => page.items)
        : Promise.resolve([]),
    [templateId],
  );
}

/** One version of a template, with its pages (none while no version is chosen). */
export function useVersion(
  templateId: string | undefined,
  version: number | undefined,
): Loaded<WorkflowTemplateDetail | undefined> {
  return useLoad(
    (api) =>
      templateId && version
        ? api.getWorkflowTemplate({ id: templateId, version })
        : Promise.resolve(undefined),
    [templateId, version],
  );
}

/** "Version 3 · Laptop handover (latest)", as a version's option reads. */
export function versionLabel(v: WorkflowTemplateVersion, latest: number | undefined): string {
  return `Version ${v.version} · ${v.name}${v.version === latest ? ' (latest)' : ''}`;
}

/**
 * A version to choose: a select of the template's versions (less `exclude`), or, when they
 * cannot be listed (a key without templates:read), its number typed. The API's refusal naming
 * it shows under it.
 */
export function VersionChoice({
  id,
  label,
  value,
  versions,
  exclude,
  message,
  describedBy,
  disabled,
  onChange,
}: {
  id: string;
  label: string;
  value: number | undefined;
  versions: WorkflowTemplateVersion[] | undefined;
  exclude?: number;
  message?: string;
  describedBy?: string;
  disabled?: boolean;
  onChange(version: number | undefined): void;
}) {
  const latest = versions?.length ? Math.max(...versions.map((v) => v.version)) : undefined;
  const shown = (versions ?? []).filter((v) => v.version !== exclude);
  const described = message ? `${id}-error` : describedBy;
  return (
    <label class="field" for={id}>
      <span>{label}</span>
      {versions ? (
        <select
          id={id}
          value={value === undefined ? '' : String(value)}
          disabled={disabled || !shown.length}
          aria-invalid={message ? true : undefined}
          aria-describedby={described}
          onChange={(event) => {
            const v = event.currentTarget.value;
            onChange(v ? Number(v) : undefined);
          }}
        >
          {value === undefined && <option value="">Choose a version…</option>}
          {shown.map((v) => (
            <option key={v.version} value={String(v.version)}>
              {versionLabel(v, latest)}
            </option>
          ))}
        </select>
      ) : (
        <input
          id={id}
          type="number"
          min={1}
          step={1}
          value={value === undefined ? '' : String(value)}
          disabled={disabled}
          aria-invalid={message ? true : undefined}
          aria-describedby={described}
          onInput={(event) => {
            const v = event.currentTarget.valueAsNumber;
            onChange(Number.isInteger(v) && v > 0 ? v : undefined);
          }}
        />
      )}
      <FieldMessage id={`${id}-error`} message={message} />
    </label>
  );
}

/** A JSON Pointer's segment, escaped. */
const segment = (name: string) => name.replace(/~/g, '~0').replace(/\//g, '~1');
const unescape = (text: string) => text.replace(/~1/g, '/').replace(/~0/g, '~');

/** The JSON Pointer the API names a page of page_map by. */
export function pageMapPointer(page: string): string {
  return `/page_map/${segment(page)}`;
}

/** The page a source page becomes when page_map leaves it out: the target's page of its name. */
function byName(page: string, to: readonly TemplatePage[]): string | null {
  return to.some((p) => p.name === page) ? page : null;
}

/** The target page each page of `from` becomes: as chosen, or else by name. */
export function targetOf(
  page: string,
  to: readonly TemplatePage[],
  chosen: PageMap,
): string | null {
  return Object.hasOwn(chosen, page) ? (chosen[page] ?? null) : byName(page, to);
}

/**
 * The page_map to send: the choices that differ from the map by name (which the API applies to
 * the pages page_map leaves out), or undefined when there are none.
 */
export function pageMapBody(
  from: readonly TemplatePage[],
  to: readonly TemplatePage[],
  chosen: PageMap,
): PageMap | undefined {
  const body: PageMap = {};
  for (const page of from) {
    if (!Object.hasOwn(chosen, page.name)) continue;
    const target = chosen[page.name] ?? null;
    if (target !== byName(page.name, to)) body[page.name] = target;
  }
  return Object.keys(body).length ? body : undefined;
}

/** The page of `from` holding a field an error names (`/input_fields/<id>`), if any. */
function pageOfField(error: unknown, from: readonly TemplatePage[]): string | undefined {
  const field = fieldOf(error);
  if (!field?.startsWith('/input_fields/')) return undefined;
  const inputId = unescape(field.slice('/input_fields/'.length));
  return from.find((p) => p.inputFields.some((f) => f.inputId === inputId))?.name;
}

/** Whether the page map shows the error (under a page's row), so it need not show on top. */
export function mapShowsError(error: unknown, from: readonly TemplatePage[] | undefined): boolean {
  if (!from) return false;
  const field = fieldOf(error);
  if (field === undefined) return false;
  return (
    from.some((p) => field === pageMapPointer(p.name)) || pageOfField(error, from) !== undefined
  );
}

const fieldNames = (page: TemplatePage) => page.inputFields.map((f) => f.fieldName).join(', ');

/**
 * The two versions' pages side by side: each page of `from` with a select of the page of `to`
 * it becomes ("— none —": left behind), the page the run is at marked; and the pages of `to`,
 * each with the page it comes from, or none (a new page). An error naming a page of page_map,
 * or a field of a page (a value the target refuses), shows under that page's row.
 */
export function PageMapEditor({
  idPrefix,
  from,
  to,
  chosen,
  onChoose,
  current,
  error,
  disabled,
}: {
  idPrefix: string;
  from: WorkflowTemplateDetail;
  to: WorkflowTemplateDetail;
  chosen: PageMap;
  onChoose(page: string, target: string | null): void;
  /** The page the run is at. */
  current?: string | null;
  error: unknown;
  disabled?: boolean;
}) {
  const sourceOf = new Map<string, string>();
  for (const page of from.pages) {
    const target = targetOf(page.name, to.pages, chosen);
    if (target !== null && !sourceOf.has(target)) sourceOf.set(target, page.name);
  }
  const fieldPage = pageOfField(error, from.pages);
  return (
    <div class="page-map">
      <div class="page-map-side">
        <h3 id={`${idPrefix}-from-title`}>Version {from.version}: its pages become</h3>
        <table class="cards page-map-table" aria-labelledby={`${idPrefix}-from-title`}>
          <thead>
            <tr>
              <th scope="col">Page of version {from.version}</th>
              <th scope="col">Page of version {to.version}</th>
            </tr>
          </thead>
          <tbody>
            {from.pages.map((page, i) => {
              const id = `${idPrefix}-map-${i}`;
              const target = targetOf(page.name, to.pages, chosen);
              const here = current === page.name;
              const message =
                fieldError(error, pageMapPointer(page.name)) ??
                (fieldPage === page.name ? messageOf(error) : undefined);
              return (
                <tr
                  key={page.name}
                  class={here ? 'page-map-current' : undefined}
                  aria-current={here ? 'step' : undefined}
                  data-page={page.name}
                >
                  <td data-label={`Page of version ${from.version}`}>
                    <label for={id} class="page-map-name">
                      {page.name}
                    </label>
                    {here && <span class="badge here">the run is here</span>}
                    {page.inputFields.length > 0 && (
                      <small class="muted page-map-fields">fields: {fieldNames(page)}</small>
                    )}
                  </td>
                  <td data-label={`Page of version ${to.version}`}>
                    <select
                      id={id}
                      value={target ?? ''}
                      disabled={disabled}
                      aria-invalid={message ? true : undefined}
                      aria-describedby={message ? `${id}-error` : undefined}
                      onChange={(event) => onChoose(page.name, event.currentTarget.value || null)}
                    >
                      <option value="">— none —</option>
                      {to.pages.map((p) => (
                        <option key={p.name} value={p.name}>
                          {p.name}
                        </option>
                      ))}
                    </select>
                    <FieldMessage id={`${id}-error`} message={message} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <div class="page-map-side">
        <h3 id={`${idPrefix}-to-title`}>Version {to.version}: its pages</h3>
        <ol class="page-map-targets" aria-labelledby={`${idPrefix}-to-title`}>
          {to.pages.map((page) => {
            const source = sourceOf.get(page.name);
            return (
              <li key={page.name} class={source ? undefined : 'page-map-new'}>
                <strong>{page.name}</strong>{' '}
                <span class="muted">
                  {source === undefined
                    ? '· no page maps here'
                    : source === page.name
                      ? '· same page'
                      : `· from ${source}`}
                </span>
                {page.inputFields.length > 0 && (
                  <small class="muted page-map-fields">fields: {fieldNames(page)}</small>
                )}
              </li>
            );
          })}
        </ol>
      </div>
    </div>
  );
}

/** Quotes a value for a sentence ("(blank)" for an empty one). */
function quoted(value: string): string {
  return value === '' ? '(blank)' : `“${value}”`;
}

/**
 * What a move did or would do, in words: the step the run is at after it (its assignee and new
 * due time), the pages mapped and left behind, the values dropped (each with its value and why),
 * the fields defaulted, the steps passed over and the assignments dropped. `fieldName` names an
 * input field by its id (from either version).
 */
export function MigrationSummary({
  migration: m,
  fieldName,
  would,
}: {
  migration: Migration;
  fieldName(inputId: string): string;
  /** A dry run's answer: says what would happen. */
  would: boolean;
}) {
  const dropped = Object.entries(m.droppedFields ?? {});
  const incompatible = new Set(m.incompatibleFields ?? []);
  const renamed = Object.entries(m.pageMap).filter(([from, to]) => from !== to);
  const named = (inputId: string) => {
    const name = fieldName(inputId);
    return name === inputId ? name : `${name} (${inputId})`;
  };
  return (
    <dl class="facts migration-summary">
      <dt>Version</dt>
      <dd>
        {would ? 'would move' : 'moved'} from version {m.fromVersion} to version {m.toVersion} (
        {m.workflowName})
      </dd>
      <dt>Current step</dt>
      <dd>
        {m.step ? (
          <>
            {m.step}
            {m.assignee && <> · assigned to {m.assignee}</>}
          </>
        ) : (
          <span class="muted">none: the run has not started</span>
        )}
      </dd>
      {m.step && (
        <>
          <dt>Due</dt>
          <dd>
            {m.dueDate ? (
              <>
                <Time value={m.dueDate} /> (counted from the step's start)
              </>
            ) : (
              <span class="muted">no due time</span>
            )}
          </dd>
        </>
      )}
      <dt>Pages</dt>
      <dd>
        {renamed.length === 0 && !m.unmappedPages?.length
          ? 'each page keeps its name'
          : [
              ...renamed.map(([from, to]) => `${from} becomes ${to}`),
              ...(m.unmappedPages ?? []).map((p) => `${p} is left behind`),
            ].join('; ')}
      </dd>
      <dt>Values dropped</dt>
      <dd>
        {dropped.length === 0 ? (
          'none'
        ) : (
          <ul class="plain migration-dropped">
            {dropped.map(([inputId, value]) => (
              <li key={inputId}>
                {named(inputId)}: {quoted(value)}{' '}
                <span class="muted">
                  {incompatible.has(inputId)
                    ? `(incompatible: the field of version ${m.toVersion} refuses it)`
                    : `(version ${m.toVersion} has no such field)`}
                </span>
              </li>
            ))}
          </ul>
        )}
      </dd>
      {m.defaultedFields?.length ? (
        <>
          <dt>Defaulted</dt>
          <dd>
            {m.defaultedFields.map(named).join(', ')}{' '}
            <span class="muted">(take the default of version {m.toVersion})</span>
          </dd>
        </>
      ) : null}
      {m.skippedSteps?.length ? (
        <>
          <dt>Steps skipped</dt>
          <dd>
            {m.skippedSteps.join(', ')}{' '}
            <span class="muted">(before the current step, and no page maps onto them)</span>
          </dd>
        </>
      ) : null}
      {m.droppedAssignments && Object.keys(m.droppedAssignments).length ? (
        <>
          <dt>Assignments dropped</dt>
          <dd>
            {Object.entries(m.droppedAssignments)
              .map(([page, user]) => `${page} (${user})`)
              .join(', ')}
          </dd>
        </>
      ) : null}
    </dl>
  );
}

/** Names input fields by id from the pages of the versions given. */
export function fieldNamer(
  ...versions: Array<WorkflowTemplateDetail | undefined>
): (inputId: string) => string {
  const names = new Map<string, string>();
  for (const v of versions)
    for (const p of v?.pages ?? [])
      for (const f of p.inputFields) if (!names.has(f.inputId)) names.set(f.inputId, f.fieldName);
  return (inputId) => names.get(inputId) ?? inputId;
}

/**
 * The "drop incompatible values" choice of a move: a value the `target` version's field refuses
 * is dropped rather than what happens `instead`.
 */
export function DropIncompatible({
  checked,
  target,
  instead,
  onChange,
}: {
  checked: boolean;
  target: string;
  instead: string;
  onChange(checked: boolean): void;
}) {
  return (
    <label class="check migrate-drop">
      <input
        type="checkbox"
        checked={checked}
        onChange={(event) => onChange(event.currentTarget.checked)}
      />{' '}
      Drop incompatible values: a value the {target} version's field refuses is dropped (and kept in
      the run's history) rather than {instead}
    </label>
  );
}
