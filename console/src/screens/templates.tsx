// The templates: those that take new runs, or the archived ones (the URL's ?archived=true), a
// keyset page at a time (?cursor=). The list's answer holds each template's fields only, so
// each row's version, state and last change are read from the template in full.
import type {
  WorkflowRunClient,
  WorkflowTemplate,
  WorkflowTemplateDetail,
} from 'workflow-run-client';
import { messageOf } from '../api.js';
import { href, navigate, useLocation } from '../router.js';
import { ActionButton, Empty, ErrorBanner, Loading, ScreenHeader, Time, useLoad } from '../ui.js';

const PAGE_SIZE = 25;

interface Row {
  item: WorkflowTemplate;
  /** The template in full, or why it could not be read. */
  detail: WorkflowTemplateDetail | undefined;
  error: unknown;
}

async function loadRows(api: WorkflowRunClient, archived: boolean, cursor: string | null) {
  const page = await api.page('getWorkflowTemplates', {
    archived: archived || undefined,
    limit: PAGE_SIZE,
    cursor: cursor || undefined,
  });
  const details = await Promise.allSettled(
    page.items.map((item) => api.getWorkflowTemplate({ id: item.id })),
  );
  const rows: Row[] = page.items.map((item, i) => {
    const settled = details[i]!;
    return settled.status === 'fulfilled'
      ? { item, detail: settled.value, error: undefined }
      : { item, detail: undefined, error: settled.reason };
  });
  return { rows, next: page.nextCursor };
}

/** Pages of a list item when its detail could not be read: those that have fields. */
function pagesOf(row: Row): string {
  if (row.detail) return String(row.detail.pages.length);
  return String(new Set(row.item.inputFields.map((f) => f.pageName)).size || '—');
}

export function TemplatesScreen() {
  const { query } = useLocation();
  const archived = query.get('archived') === 'true';
  const cursor = query.get('cursor');
  const list = useLoad((api) => loadRows(api, archived, cursor), [archived, cursor]);
  const rows = list.data?.rows;

  return (
    <section class="templates">
      <ScreenHeader title="Templates">
        <ActionButton
          scope="templates:write"
          class="primary"
          onClick={() => navigate('/templates/new')}
        >
          New template
        </ActionButton>
      </ScreenHeader>
      <div class="tpl-toolbar">
        <label class="check">
          <input
            type="checkbox"
            checked={archived}
            onChange={(event) =>
              navigate('/templates', event.currentTarget.checked ? { archived: 'true' } : {})
            }
          />
          Show the archived templates instead
        </label>
        {list.loading && rows && <span class="muted">Refreshing…</span>}
      </div>
      <ErrorBanner error={list.error} title="The templates could not be read" />
      {!rows && list.loading && <Loading what="templates" />}
      {rows && rows.length === 0 && (
        <Empty>
          {cursor
            ? 'No more templates.'
            : archived
              ? 'No archived templates.'
              : 'No templates yet: create one with “New template”.'}
        </Empty>
      )}
      {rows && rows.length > 0 && (
        <table class="cards">
          <caption class="tpl-sr">
            {archived ? 'Archived templates' : 'Templates taking new runs'}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Pages</th>
              <th scope="col">Fields</th>
              <th scope="col">Version</th>
              <th scope="col">State</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.item.id}>
                <td data-label="Name">
                  <a href={href(`/templates/${encodeURIComponent(row.item.id)}`)}>
                    {row.item.name}
                  </a>
                  {row.error !== undefined && (
                    <small class="field-error">Details not read: {messageOf(row.error)}</small>
                  )}
                </td>
                <td data-label="Pages">{pagesOf(row)}</td>
                <td data-label="Fields">{row.item.inputFields.length}</td>
                <td data-label="Version">{row.detail ? row.detail.latestVersion : '—'}</td>
                <td data-label="State">
                  {row.detail ? (
                    <ArchivedBadge archived={row.detail.archived} />
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
                <td data-label="Updated">
                  <Time value={row.detail?.updatedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(cursor || list.data?.next) && (
        <nav class="tpl-pager" aria-label="Pages of templates">
          {cursor && (
            <a href={href('/templates', archived ? { archived: 'true' } : {})}>First page</a>
          )}
          {list.data?.next && (
            <a
              href={href('/templates', {
                ...(archived ? { archived: 'true' } : {}),
                cursor: list.data.next,
              })}
            >
              Next page
            </a>
          )}
        </nav>
      )}
    </section>
  );
}

/** Whether a template takes new runs, in words. */
export function ArchivedBadge({ archived }: { archived: boolean }) {
  return archived ? (
    <span class="badge status-cancelled">archived</span>
  ) : (
    <span class="badge status-completed">active</span>
  );
}
