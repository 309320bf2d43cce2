// One template: a version of it (the URL's ?version=, the latest without) with its pages and
// fields, its versions, archive and restore; and the form editor, for a new template
// (/templates/new) or a new version (?edit=1, prefilled from the version shown). A save shows
// the version saved, at its own URL, without a reload.
import { useState } from 'preact/hooks';
import type { WorkflowTemplateDetail, WorkflowTemplateVersion } from 'workflow-run-client';
import { TYPE_WORDS, valueWords } from '../field-types.js';
import { href, navigate, type Location } from '../router.js';
import { dueWords, fieldsOf, ruleLabel, ruleWords, type Fields } from '../rule-words.js';
import {
  ActionButton,
  confirmAction,
  CopyButton,
  Empty,
  ErrorBanner,
  Loading,
  ScreenHeader,
  Time,
  useLoad,
  useConsole,
  useNotice,
} from '../ui.js';
import type { Actor, Rule, RuleAction, TemplateField, TemplatePage } from '../vocabulary.js';
import { TemplateEditor } from './template-editor.js';
import { ArchivedBadge } from './templates.js';

const templatePath = (id: string) => `/templates/${encodeURIComponent(id)}`;

/** Who saved a version, in words. */
function actorName(actor: Actor | undefined): string {
  if (!actor) return 'not recorded';
  if (actor.type === 'api_key') return actor.name ?? `key ${actor.id.slice(0, 8)}`;
  if (actor.type === 'schedule') return `schedule ${actor.id}`;
  return actor.type === 'system' ? 'the service' : 'admin CLI';
}

/** The URL's ?version=, when it is a version number. */
function versionOf(query: URLSearchParams): number | undefined {
  const text = query.get('version');
  if (!text || !/^[1-9][0-9]{0,9}$/.test(text)) return undefined;
  return Number(text);
}

export function TemplateScreen({ id, location }: { id: string; location: Location }) {
  const isNew = id === 'new';
  const version = versionOf(location.query);
  const editing = isNew || location.query.get('edit') === '1';
  const [notice, say] = useNotice();
  const detail = useLoad(
    (api) => (isNew ? Promise.resolve(undefined) : api.getWorkflowTemplate({ id, version })),
    [id, version],
  );

  /** A save's answer: shown at once, at the URL of the version saved. */
  const showSaved = (saved: WorkflowTemplateDetail, created: boolean) => {
    detail.set(() => saved);
    say(created ? `Created ${saved.name}.` : `Saved version ${saved.version}.`);
    navigate(templatePath(saved.id), { version: String(saved.version) }, true);
  };

  if (isNew) {
    return (
      <section class="template">
        <p class="tpl-crumbs">
          <a href={href('/templates')}>Templates</a>
        </p>
        <ScreenHeader title="New template" />
        <TemplateEditor
          onSaved={(saved) => showSaved(saved, true)}
          onCancel={() => navigate('/templates')}
        />
        {notice}
      </section>
    );
  }

  const data = detail.data;
  const shownQuery: Record<string, string> = version ? { version: String(version) } : {};
  return (
    <section class="template">
      <p class="tpl-crumbs">
        <a href={href('/templates')}>Templates</a>
      </p>
      {!data && detail.loading && <Loading what="the template" />}
      {!data && !detail.loading && (
        <>
          <ScreenHeader title="Template" />
          <ErrorBanner error={detail.error} title="The template could not be read" />
        </>
      )}
      {data && editing && (
        <>
          <ScreenHeader title={`Edit ${data.name}`} />
          <TemplateEditor
            key={`${data.id}-${data.version}`}
            base={data}
            onSaved={(saved) => showSaved(saved, false)}
            onCancel={() => navigate(templatePath(id), shownQuery)}
          />
        </>
      )}
      {data && !editing && (
        <TemplateView
          data={data}
          error={detail.error}
          onChange={(changed) => detail.set(() => changed)}
          say={say}
        />
      )}
      {data && <Versions id={data.id} shown={data.version} latest={data.latestVersion} />}
      {notice}
    </section>
  );
}

function TemplateView({
  data,
  error,
  onChange,
  say,
}: {
  data: WorkflowTemplateDetail;
  error: unknown;
  onChange(changed: WorkflowTemplateDetail): void;
  say(text: string): void;
}) {
  const { api } = useConsole();
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  const setArchived = async (archived: boolean) => {
    const answer = await confirmAction(
      archived
        ? {
            title: `Archive ${data.name}?`,
            body: 'It takes no new runs; its runs go on to their end. Restoring it makes it take runs again.',
            confirm: 'Archive',
            danger: true,
          }
        : {
            title: `Restore ${data.name}?`,
            body: 'It takes new runs again.',
            confirm: 'Restore',
          },
    );
    if (!answer) return;
    setBusy(true);
    setActionError(undefined);
    try {
      const changed = archived
        ? await api.archiveWorkflowTemplate({ id: data.id })
        : await api.restoreWorkflowTemplate({ id: data.id });
      // The answer is the template at its latest version; the version shown stays.
      onChange({
        ...data,
        archived: changed.archived,
        updatedAt: changed.updatedAt,
        latestVersion: changed.latestVersion,
      });
      say(changed.archived ? `${data.name} is archived.` : `${data.name} is restored.`);
    } catch (caught) {
      setActionError(caught);
    } finally {
      setBusy(false);
    }
  };

  const fields = fieldsOf(data.pages);
  return (
    <>
      <ScreenHeader title={data.name}>
        <a class="button" href={href('/insights', { template_id: data.id })}>
          Insights
        </a>
        <ActionButton
          scope="templates:write"
          onClick={() =>
            navigate(templatePath(data.id), { version: String(data.version), edit: '1' })
          }
        >
          Edit as a new version
        </ActionButton>
        {data.archived ? (
          <ActionButton
            scope="templates:write"
            disabled={busy}
            onClick={() => void setArchived(false)}
          >
            Restore
          </ActionButton>
        ) : (
          <ActionButton
            scope="templates:write"
            class="danger"
            disabled={busy}
            onClick={() => void setArchived(true)}
          >
            Archive
          </ActionButton>
        )}
      </ScreenHeader>
      <ErrorBanner error={actionError} title="Not done" />
      {error !== undefined && <ErrorBanner error={error} title="Not refreshed" />}
      {data.version !== data.latestVersion && (
        <p class="banner info">
          This is version {data.version}. The latest, which new runs use, is{' '}
          <a href={href(templatePath(data.id), { version: String(data.latestVersion) })}>
            version {data.latestVersion}
          </a>
          .
        </p>
      )}
      <div class="panel">
        <dl class="facts">
          <dt>State</dt>
          <dd>
            <ArchivedBadge archived={data.archived} />{' '}
            <span class="muted">{data.archived ? 'takes no new runs' : 'takes new runs'}</span>
          </dd>
          <dt>Version</dt>
          <dd>
            {data.version} of {data.latestVersion}
            {data.version === data.latestVersion && ' (latest)'}
          </dd>
          <dt>Version saved</dt>
          <dd>
            <Time value={data.versionCreatedAt} /> by {actorName(data.versionCreatedBy)}
          </dd>
          <dt>Created</dt>
          <dd>
            <Time value={data.createdAt} />
          </dd>
          <dt>Updated</dt>
          <dd>
            <Time value={data.updatedAt} />
          </dd>
          <dt>Id</dt>
          <dd class="tpl-id">
            <code>{data.id}</code> <CopyButton text={data.id} label="Copy id" />
          </dd>
        </dl>
      </div>
      <h2>Pages</h2>
      <ol class="tpl-pages">
        {data.pages.map((page, p) => (
          <li key={page.name}>
            <PageView
              page={page}
              number={p + 1}
              fields={fields}
              decided={decidedBy(data.rules ?? [], page.name)}
            />
          </li>
        ))}
      </ol>
      <section class="panel" aria-labelledby="tpl-rules-heading">
        <h2 id="tpl-rules-heading">Rules</h2>
        {data.rules?.length ? (
          <ol class="tpl-rules-view">
            {data.rules.map((rule, r) => (
              <li key={r}>
                <strong>
                  Rule {r + 1}
                  {rule.name && <>, “{rule.name}”</>}:
                </strong>{' '}
                {ruleWords(rule, fields)}
              </li>
            ))}
          </ol>
        ) : (
          <Empty>No rules: every page is shown.</Empty>
        )}
      </section>
    </>
  );
}

/** A field's type's limits and its extras, in words. */
function fieldDetails(field: TemplateField): string[] {
  const details: string[] = [];
  if (field.options) details.push(`options: ${field.options.join(', ')}`);
  if (field.min !== undefined) details.push(`at least ${field.min}`);
  if (field.max !== undefined) details.push(`at most ${field.max}`);
  if (field.integer) details.push('whole numbers');
  if (field.minLength !== undefined) details.push(`at least ${field.minLength} characters`);
  if (field.maxLength !== undefined) details.push(`at most ${field.maxLength} characters`);
  if (field.pattern !== undefined) details.push(`matches ${field.pattern}`);
  if (field.default) details.push(`default: ${valueWords(field.type, field.default)}`);
  if (field.placeholder) details.push(`placeholder: “${field.placeholder}”`);
  if (field.help) details.push(`help: “${field.help}”`);
  return details;
}

/** What the rules decide of a page, in words ("Shown only when rule 1 applies."). */
function decidedBy(rules: Rule[], page: string): string[] {
  const acting = (action: RuleAction['action']) =>
    rules.flatMap((rule, r) =>
      rule.then.some((a) => a.action === action && a.page === page)
        ? [ruleLabel(r, rule.name)]
        : [],
    );
  const words: string[] = [];
  const shown = acting('show_page');
  const hidden = acting('hide_page');
  const due = acting('set_due');
  const assigned = acting('assign');
  if (shown.length) words.push(`Shown only when ${shown.join(' or ')} applies.`);
  if (hidden.length) words.push(`Skipped when ${hidden.join(' or ')} applies.`);
  if (due.length) words.push(`Its due time may be set by ${due.join(' or ')}.`);
  if (assigned.length) words.push(`Its assignee may be chosen by ${assigned.join(' or ')}.`);
  return words;
}

function PageView({
  page,
  number,
  fields,
  decided,
}: {
  page: TemplatePage;
  number: number;
  fields: Fields;
  decided: string[];
}) {
  const headingId = `tpl-page-${number}`;
  return (
    <section class="panel tpl-page" aria-labelledby={headingId}>
      <h3 id={headingId}>
        Page {number}: {page.name}
      </h3>
      <p class="muted">
        {page.due
          ? `Due ${dueWords(page.due, fields)}.`
          : page.dueInHours === undefined
            ? 'No due time.'
            : `Due ${page.dueInHours} ${page.dueInHours === 1 ? 'hour' : 'hours'} after its step starts.`}
        {decided.map((words) => ` ${words}`)}
      </p>
      {page.inputFields.length === 0 ? (
        <Empty>No input fields.</Empty>
      ) : (
        <table class="cards">
          <caption class="tpl-sr">Input fields of page {number}</caption>
          <thead>
            <tr>
              <th scope="col">Input id</th>
              <th scope="col">Field name</th>
              <th scope="col">Type</th>
              <th scope="col">Required</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {page.inputFields.map((field) => (
              <tr key={field.inputId}>
                <td data-label="Input id">
                  <code>{field.inputId}</code>
                </td>
                <td data-label="Field name">{field.fieldName}</td>
                <td data-label="Type">{TYPE_WORDS[field.type ?? 'text']}</td>
                <td data-label="Required">{field.required ? 'required' : 'optional'}</td>
                <td data-label="Details">
                  {fieldDetails(field).join('; ') || <span class="muted">—</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const VERSIONS_PAGE = 20;

/** The template's versions, newest first; choosing one shows it (the URL's ?version=). */
function Versions({ id, shown, latest }: { id: string; shown: number; latest: number }) {
  const [more, setMore] = useState<{
    items: WorkflowTemplateVersion[];
    next: string | null;
  } | null>(null);
  const [moreError, setMoreError] = useState<unknown>(undefined);
  const { api } = useConsole();
  const first = useLoad(
    async (api) => {
      setMore(null);
      return api.page('getWorkflowTemplateVersions', { id, limit: VERSIONS_PAGE });
    },
    [id, latest],
  );
  const items = [...(first.data?.items ?? []), ...(more?.items ?? [])];
  const next = more ? more.next : (first.data?.nextCursor ?? null);

  const loadMore = async () => {
    if (!next) return;
    setMoreError(undefined);
    try {
      const page = await api.page('getWorkflowTemplateVersions', {
        id,
        limit: VERSIONS_PAGE,
        cursor: next,
      });
      setMore((m) => ({ items: [...(m?.items ?? []), ...page.items], next: page.nextCursor }));
    } catch (caught) {
      setMoreError(caught);
    }
  };

  return (
    <section class="tpl-versions" aria-labelledby="tpl-versions-heading">
      <h2 id="tpl-versions-heading">Versions</h2>
      <ErrorBanner error={first.error} title="The versions could not be read" />
      {!first.data && first.loading && <Loading what="the versions" />}
      {first.data && items.length === 0 && <Empty>No versions.</Empty>}
      {items.length > 0 && (
        <table class="cards">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">Name</th>
              <th scope="col">Saved</th>
              <th scope="col">By</th>
              <th scope="col">Pages</th>
              <th scope="col">Fields</th>
            </tr>
          </thead>
          <tbody>
            {items.map((v) => (
              <tr key={v.version} class={v.version === shown ? 'tpl-shown' : undefined}>
                <td data-label="Version">
                  <a
                    href={href(`/templates/${encodeURIComponent(id)}`, {
                      version: String(v.version),
                    })}
                    aria-current={v.version === shown ? 'page' : undefined}
                  >
                    Version {v.version}
                  </a>
                  {v.version === latest && <span class="muted"> (latest)</span>}
                  {v.version === shown && <span class="muted"> (shown)</span>}
                </td>
                <td data-label="Name">{v.name}</td>
                <td data-label="Saved">
                  <Time value={v.createdAt} />
                </td>
                <td data-label="By">{actorName(v.createdBy)}</td>
                <td data-label="Pages">{v.pageCount}</td>
                <td data-label="Fields">{v.fieldCount}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorBanner error={moreError} title="More versions could not be read" />
      {next && (
        <div class="buttons">
          <button type="button" onClick={() => void loadMore()}>
            More versions
          </button>
        </div>
      )}
    </section>
  );
}
