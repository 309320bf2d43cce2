// Insights: how the organization's runs (or one template's: ?template_id=) have gone over a
// range, from GET /get-run-insights. The range (two dates, whole days in the organization's
// time zone), the bucket, a version, a label and an assignee are the URL's query under the
// API's own names, so a view can be bookmarked and reloaded. It shows the runs created and
// ended per bucket (bars), their time to complete (p50 and p90 lines, a gap where none ended),
// a table of the steps (sortable), and the open runs at each step now, each a link to the runs
// screen filtered to them. Every chart has its figures as a table beside it.
import { useState } from 'preact/hooks';
import type { RunInsights, WorkflowRunClient } from 'workflow-run-client';
import { BarChart, CellBar, Legend, LineChart, type Series } from '../charts.js';
import {
  BUCKET_WORDS,
  BUCKETS,
  axisLabels,
  bucketWords,
  countTicks,
  dayStart,
  dayWords,
  DEFAULT_RANGE_WORDS,
  durationTicks,
  durationWords,
  isDate,
  lagWords,
  rateOf,
  rateWords,
  type Bucket,
} from '../insight-words.js';
import { useVersions } from '../migration.js';
import { href, navigate, type Location } from '../router.js';
import {
  Empty,
  ErrorBanner,
  fieldError,
  FieldMessage,
  Loading,
  namesField,
  ScreenHeader,
  Time,
  useCan,
  useLoad,
} from '../ui.js';
import { useTemplateNames } from './schedule-parts.js';

type StepFigures = RunInsights['steps'][number];

interface InsightsFilter {
  templateId: string;
  /** A version of the template (digits), or '' for every version; only with templateId. */
  version: string;
  /** The first and the last day of the range (YYYY-MM-DD), or '' for the API's default. */
  from: string;
  to: string;
  bucket: Bucket;
  /** key:value, or ''. */
  label: string;
  assignee: string;
}

function filterOf(query: URLSearchParams): InsightsFilter {
  const templateId = query.get('template_id') ?? '';
  const version = query.get('template_version') ?? '';
  const bucket = query.get('bucket');
  const from = query.get('from');
  const to = query.get('to');
  return {
    templateId,
    version: templateId && /^[1-9]\d{0,8}$/.test(version) ? version : '',
    from: isDate(from) ? from : '',
    to: isDate(to) ? to : '',
    bucket: BUCKETS.find((b) => b === bucket) ?? 'day',
    label: query.get('label') ?? '',
    assignee: query.get('assignee') ?? '',
  };
}

/** The URL's query of a filter (the API's parameter names; dates as the date inputs give them). */
function searchOf(filter: InsightsFilter): Record<string, string> {
  const query: Record<string, string> = {};
  if (filter.templateId) query.template_id = filter.templateId;
  if (filter.templateId && filter.version) query.template_version = filter.version;
  if (filter.from) query.from = filter.from;
  if (filter.to) query.to = filter.to;
  if (filter.bucket !== 'day') query.bucket = filter.bucket;
  if (filter.label) query.label = filter.label;
  if (filter.assignee) query.assignee = filter.assignee;
  return query;
}

/** The organization's time zone, read once per client (the days of the range are its days). */
const zones = new WeakMap<WorkflowRunClient, Promise<string>>();
function zoneOf(api: WorkflowRunClient): Promise<string> {
  let zone = zones.get(api);
  if (!zone) {
    zone = api.getOrganizationSettings().then((s) => s.timeZone);
    zone.catch(() => zones.delete(api));
    zones.set(api, zone);
  }
  return zone;
}

async function loadInsights(api: WorkflowRunClient, filter: InsightsFilter) {
  // A range's days are the organization's: from the start of the first to the end of the last.
  const zone = filter.from || filter.to ? await zoneOf(api) : undefined;
  const answer = await api.getRunInsights({
    template_id: filter.templateId || undefined,
    template_version: filter.templateId && filter.version ? Number(filter.version) : undefined,
    from: zone && filter.from ? dayStart(filter.from, zone) : undefined,
    to: zone && filter.to ? dayStart(filter.to, zone, 1) : undefined,
    bucket: filter.bucket,
    label: filter.label || undefined,
    assignee: filter.assignee || undefined,
  });
  if (!zones.has(api)) zones.set(api, Promise.resolve(answer.timeZone));
  return answer;
}

export function InsightsScreen({ location }: { location: Location }) {
  const canRead = useCan('runs:read');
  if (!canRead) {
    return (
      <section>
        <ScreenHeader title="Insights" />
        <p class="banner info">
          This key does not hold the <code>runs:read</code> scope, so it cannot read the runs'
          figures. Sign in with a key that holds it to see them.
        </p>
      </section>
    );
  }
  return <InsightsView location={location} />;
}

const FILTER_FIELDS = [
  '/template_id',
  '/template_version',
  '/from',
  '/to',
  '/bucket',
  '/label',
  '/assignee',
];

function InsightsView({ location }: { location: Location }) {
  const filter = filterOf(location.query);
  const search = new URLSearchParams(searchOf(filter)).toString();
  const names = useTemplateNames();
  const insights = useLoad((api) => loadInsights(api, filter), [search]);
  const pageOrder = usePageOrder(filter);
  const templateName = filter.templateId ? names.of(filter.templateId) : '';
  const title = filter.templateId ? `Insights: ${templateName}` : 'Insights';
  const data = insights.data;
  const shown = (field: string) => FILTER_FIELDS.includes(field);
  // Open on a wide screen, or when something is chosen; on a phone it folds away otherwise.
  const chosen = Object.keys(searchOf(filter)).some((k) => k !== 'template_id');
  const [filterOpen] = useState(() => chosen || window.matchMedia('(min-width: 721px)').matches);
  return (
    <section class="insights">
      {filter.templateId && (
        <p class="tpl-crumbs">
          <a href={href('/insights')}>Insights of every template</a> ·{' '}
          <a href={href(`/templates/${encodeURIComponent(filter.templateId)}`)}>
            The template {templateName}
          </a>
        </p>
      )}
      <ScreenHeader title={title}>
        <button type="button" disabled={insights.loading} onClick={insights.reload}>
          {insights.loading && data ? 'Refreshing…' : 'Refresh'}
        </button>
      </ScreenHeader>
      <details class="insights-filter-fold" open={filterOpen || namesField(insights.error, shown)}>
        <summary>Range and filter{chosen ? ' (chosen)' : ''}</summary>
        <InsightsFilterForm
          key={search}
          value={filter}
          error={insights.error}
          templates={names.list}
          onChange={(next) => navigate('/insights', searchOf(next))}
        />
      </details>
      {!namesField(insights.error, shown) && (
        <ErrorBanner error={insights.error} title="The figures could not be read" />
      )}
      {!data && insights.loading && <Loading what="the figures" />}
      {data && (
        <div class="insights-body" aria-busy={insights.loading}>
          <AsOf data={data} />
          <Totals data={data} />
          <div class="insights-charts">
            <Throughput data={data} />
            <TimeToComplete data={data} />
          </div>
          <StepsTable
            data={data}
            names={names.of}
            byTemplate={!filter.templateId}
            order={pageOrder}
          />
          <OpenRuns
            data={data}
            names={names.of}
            byTemplate={!filter.templateId}
            order={pageOrder}
          />
        </div>
      )}
    </section>
  );
}

/**
 * The names of the template's pages in their order (of the version chosen, else the latest),
 * for listing its steps as its pages go; undefined for every template, or when the key cannot
 * read templates (the answer's order stands then).
 */
function usePageOrder(filter: InsightsFilter): string[] | undefined {
  const canTemplates = useCan('templates:read');
  const pages = useLoad(
    (api) =>
      filter.templateId && canTemplates
        ? api
            .getWorkflowTemplate({
              id: filter.templateId,
              version: filter.version ? Number(filter.version) : undefined,
            })
            .then((t) => t.pages.map((p) => p.name))
        : Promise.resolve(undefined),
    [filter.templateId, filter.version, canTemplates],
  );
  return filter.templateId ? pages.data : undefined;
}

/** Rows in the order of the template's pages (a step no page names anymore: last). */
function inPageOrder<T extends { step: string }>(rows: T[], order: string[] | undefined): T[] {
  if (!order) return rows;
  const at = (row: T) => {
    const index = order.indexOf(row.step);
    return index < 0 ? order.length : index;
  };
  return rows.slice().sort((a, b) => at(a) - at(b));
}

/** The filter's form: it applies when submitted. */
function InsightsFilterForm({
  value,
  error,
  templates,
  onChange,
}: {
  value: InsightsFilter;
  error: unknown;
  templates: Array<{ id: string; name: string }> | undefined;
  onChange(filter: InsightsFilter): void;
}) {
  const [draft, setDraft] = useState(value);
  const versions = useVersions(draft.templateId || undefined);
  const set = <K extends keyof InsightsFilter>(key: K, v: InsightsFilter[K]) =>
    setDraft({ ...draft, [key]: v });
  const errors = {
    template: fieldError(error, '/template_id'),
    version: fieldError(error, '/template_version'),
    from: fieldError(error, '/from'),
    to: fieldError(error, '/to'),
    bucket: fieldError(error, '/bucket'),
    label: fieldError(error, '/label'),
    assignee: fieldError(error, '/assignee'),
  };
  const invalid = (message: string | undefined, id: string) =>
    message ? { 'aria-invalid': true, 'aria-describedby': id } : {};
  return (
    <form
      class="panel insights-filter"
      aria-label="Choose the figures"
      onSubmit={(event) => {
        event.preventDefault();
        onChange({ ...draft, label: draft.label.trim(), assignee: draft.assignee.trim() });
      }}
    >
      <div class="filters">
        <div class="field">
          <label for="insights-template">
            <span>Template</span>
          </label>
          <select
            id="insights-template"
            value={draft.templateId}
            {...invalid(errors.template, 'insights-template-error')}
            onChange={(event) =>
              setDraft({ ...draft, templateId: event.currentTarget.value, version: '' })
            }
          >
            <option value="">Every template</option>
            {(templates ?? []).map((t) => (
              <option key={t.id} value={t.id}>
                {t.name}
              </option>
            ))}
            {draft.templateId && !templates?.some((t) => t.id === draft.templateId) && (
              <option value={draft.templateId}>{draft.templateId}</option>
            )}
          </select>
          <FieldMessage id="insights-template-error" message={errors.template} />
        </div>
        {draft.templateId && (
          <div class="field">
            <label for="insights-version">
              <span>Version</span>
            </label>
            <select
              id="insights-version"
              value={draft.version}
              {...invalid(errors.version, 'insights-version-error')}
              onChange={(event) => set('version', event.currentTarget.value)}
            >
              <option value="">Every version</option>
              {(versions.data ?? []).map((v) => (
                <option key={v.version} value={String(v.version)}>
                  Version {v.version}
                </option>
              ))}
              {draft.version &&
                !versions.data?.some((v) => String(v.version) === draft.version) && (
                  <option value={draft.version}>Version {draft.version}</option>
                )}
            </select>
            <FieldMessage id="insights-version-error" message={errors.version} />
          </div>
        )}
        <div class="field">
          <label for="insights-from">
            <span>From (day)</span>
          </label>
          <input
            id="insights-from"
            type="date"
            value={draft.from}
            {...invalid(errors.from, 'insights-from-error')}
            onInput={(event) => set('from', event.currentTarget.value)}
          />
          <FieldMessage id="insights-from-error" message={errors.from} />
        </div>
        <div class="field">
          <label for="insights-to">
            <span>To (day, included)</span>
          </label>
          <input
            id="insights-to"
            type="date"
            value={draft.to}
            {...invalid(errors.to, 'insights-to-error')}
            onInput={(event) => set('to', event.currentTarget.value)}
          />
          <FieldMessage id="insights-to-error" message={errors.to} />
        </div>
        <div class="field">
          <label for="insights-bucket">
            <span>Bucket</span>
          </label>
          <select
            id="insights-bucket"
            value={draft.bucket}
            {...invalid(errors.bucket, 'insights-bucket-error')}
            onChange={(event) => set('bucket', event.currentTarget.value as Bucket)}
          >
            {BUCKETS.map((b) => (
              <option key={b} value={b}>
                {BUCKET_WORDS[b]}
              </option>
            ))}
          </select>
          <FieldMessage id="insights-bucket-error" message={errors.bucket} />
        </div>
        <div class="field">
          <label for="insights-label">
            <span>Label (key:value)</span>
          </label>
          <input
            id="insights-label"
            value={draft.label}
            placeholder="customer:acme"
            {...invalid(errors.label, 'insights-label-error')}
            onInput={(event) => set('label', event.currentTarget.value)}
          />
          <FieldMessage id="insights-label-error" message={errors.label} />
        </div>
        <div class="field">
          <label for="insights-assignee">
            <span>Assignee (steps only)</span>
          </label>
          <input
            id="insights-assignee"
            value={draft.assignee}
            {...invalid(errors.assignee, 'insights-assignee-error')}
            onInput={(event) => set('assignee', event.currentTarget.value)}
          />
          <FieldMessage id="insights-assignee-error" message={errors.assignee} />
        </div>
      </div>
      <p class="field-help">
        Days are whole days in the organization's time zone; with no days picked, the figures cover{' '}
        {DEFAULT_RANGE_WORDS[draft.bucket]}. An assignee narrows the steps and the open steps to the
        ones that person held (the runs' figures stay those of every run); it cannot be combined
        with a label.
      </p>
      <div class="buttons">
        <button
          type="button"
          onClick={() => {
            const reset: InsightsFilter = {
              templateId: value.templateId,
              version: '',
              from: '',
              to: '',
              bucket: 'day',
              label: '',
              assignee: '',
            };
            setDraft(reset);
            onChange(reset);
          }}
        >
          Reset
        </button>
        <button type="submit" class="primary">
          Show
        </button>
      </div>
    </form>
  );
}

/** Which figures these are: the range covered, the zone, and how fresh they are. */
function AsOf({ data }: { data: RunInsights }) {
  const lag = lagWords(data.lagMs);
  const last = new Date(Date.parse(data.to) - 1).toISOString();
  const firstDay = dayWords(data.from, data.timeZone);
  const lastDay = dayWords(last, data.timeZone);
  return (
    <p class="insights-asof">
      <span>
        {firstDay === lastDay ? firstDay : `${firstDay} – ${lastDay}`}, {BUCKET_WORDS[data.bucket]}{' '}
        ({data.timeZone} time)
        {data.templateVersion !== null && `, version ${data.templateVersion}`}.
      </span>{' '}
      <span class={data.lagMs > 0 ? 'insights-lag' : 'muted'}>
        Figures as of <Time value={data.asOf} />
        {lag && ` (${lag})`}.
      </span>
    </p>
  );
}

const NUMBER = new Intl.NumberFormat();

type Counts = Record<'created' | 'completed' | 'failed' | 'cancelled', number>;

/** The range's runs created, completed, failed and cancelled: its buckets' summed. */
function totalsOf(data: RunInsights): Counts {
  const totals: Counts = { created: 0, completed: 0, failed: 0, cancelled: 0 };
  for (const b of data.buckets) {
    for (const key of Object.keys(totals) as Array<keyof Counts>) totals[key] += b[key];
  }
  return totals;
}

/** The range's figures at a glance. */
function Totals({ data }: { data: RunInsights }) {
  const totals = totalsOf(data);
  const facts: Array<[string, string]> = [
    ['Created', NUMBER.format(totals.created)],
    ['Completed', NUMBER.format(totals.completed)],
    ['Failed', NUMBER.format(totals.failed)],
    ['Cancelled', NUMBER.format(totals.cancelled)],
    ['Time to complete, median', durationWords(data.timeToComplete.p50Ms)],
    ['Time to complete, p90', durationWords(data.timeToComplete.p90Ms)],
    ['Open now', NUMBER.format(data.open.runs)],
    ['Overdue now', NUMBER.format(data.open.overdue)],
  ];
  return (
    <dl class="insights-totals" aria-label="The range in figures">
      {facts.map(([what, value]) => (
        <div key={what}>
          <dt>{what}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

const CREATED: Series = { key: 'created', label: 'Created', tone: 'created' };
const ENDED: Series[] = [
  { key: 'completed', label: 'Completed', tone: 'completed' },
  { key: 'failed', label: 'Failed', tone: 'failed' },
  { key: 'cancelled', label: 'Cancelled', tone: 'cancelled' },
];
const QUANTILES: Series[] = [
  { key: 'p50', label: 'Median (p50)', tone: 'p50' },
  { key: 'p90', label: '90th percentile (p90)', tone: 'p90', dashed: true },
];

/** The buckets' names in words, and the labels under a chart's axis. */
function bucketNames(data: RunInsights) {
  const starts = data.buckets.map((b) => b.start);
  return {
    words: data.buckets.map((b) => bucketWords(b.start, b.end, data.bucket, data.timeZone)),
    labels: (minEvery: number) => axisLabels(starts, data.bucket, data.timeZone, minEvery),
  };
}

/** "12 created, 8 completed, 1 failed and 2 cancelled". */
function countsWords(counts: Counts) {
  return `${counts.created} created, ${counts.completed} completed, ${counts.failed} failed and ${counts.cancelled} cancelled`;
}

/** A chart's figures as a table, a row per bucket, folded under "The figures as a table". */
function FiguresTable({
  data,
  words,
  caption,
  columns,
  cells,
}: {
  data: RunInsights;
  /** Each bucket's name in words. */
  words: string[];
  caption: string;
  columns: string[];
  cells: (bucket: RunInsights['buckets'][number]) => Array<string | number>;
}) {
  return (
    <details class="chart-figures">
      <summary>The figures as a table</summary>
      <table class="figures">
        <caption class="tpl-sr">{caption}</caption>
        <thead>
          <tr>
            <th scope="col">
              {data.bucket === 'hour' ? 'Hour' : data.bucket === 'day' ? 'Day' : 'Week'}
            </th>
            {columns.map((column) => (
              <th scope="col" key={column}>
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {data.buckets.map((b, i) => (
            <tr key={b.start} data-bucket={b.start}>
              <th scope="row">{words[i]}</th>
              {cells(b).map((cell, j) => (
                <td key={j}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}

function Throughput({ data }: { data: RunInsights }) {
  const { words, labels } = bucketNames(data);
  const totals = totalsOf(data);
  const max = Math.max(
    0,
    ...data.buckets.map((b) => Math.max(b.created, b.completed + b.failed + b.cancelled)),
  );
  const summary = `In all, ${countsWords(totals)}.`;
  return (
    <figure class="panel insights-chart" aria-labelledby="insights-throughput">
      <h2 id="insights-throughput">Runs created and ended</h2>
      <figcaption>
        {summary} Per {data.bucket}: runs created (left bar) beside the runs that ended then, by how
        they ended (right bar).
      </figcaption>
      {max === 0 ? (
        <Empty>No run was created or ended in this range.</Empty>
      ) : (
        <>
          <BarChart
            label={`Runs created and ended per ${data.bucket}: ${summary}`}
            count={data.buckets.length}
            categories={labels}
            titles={data.buckets.map((b, i) => `${words[i]}: ${countsWords(b)}`)}
            stacks={[[CREATED], ENDED]}
            values={data.buckets.map((b) => ({
              created: b.created,
              completed: b.completed,
              failed: b.failed,
              cancelled: b.cancelled,
            }))}
            ticks={countTicks(max)}
            tickWords={(n) => NUMBER.format(n)}
          />
          <Legend
            series={[CREATED, ...ENDED]}
            extra={(s) => ` (${NUMBER.format(totals[s.key as keyof typeof totals])})`}
          />
        </>
      )}
      <FiguresTable
        data={data}
        words={words}
        caption={`Runs created and ended per ${data.bucket}`}
        columns={['Created', 'Completed', 'Failed', 'Cancelled']}
        cells={(b) => [b.created, b.completed, b.failed, b.cancelled]}
      />
    </figure>
  );
}

function TimeToComplete({ data }: { data: RunInsights }) {
  const { words, labels } = bucketNames(data);
  const values = data.buckets.map((b) => ({
    p50: b.timeToComplete.p50Ms,
    p90: b.timeToComplete.p90Ms,
  }));
  const max = Math.max(0, ...values.map((v) => v.p90 ?? v.p50 ?? 0));
  const whole = data.timeToComplete;
  const summary =
    whole.count === 0
      ? 'No run was completed in this range.'
      : `${whole.count} ${whole.count === 1 ? 'run' : 'runs'} completed, from creation to completion in ${durationWords(whole.p50Ms)} at the median and ${durationWords(whole.p90Ms)} at the 90th percentile.`;
  return (
    <figure class="panel insights-chart" aria-labelledby="insights-ttc">
      <h2 id="insights-ttc">Time to complete</h2>
      <figcaption>
        {summary}
        {whole.count > 0 &&
          ` Per ${data.bucket}, of the runs completed then; a gap where none was.`}
      </figcaption>
      {whole.count > 0 && (
        <>
          <LineChart
            label={`Time to complete per ${data.bucket}: ${summary}`}
            count={data.buckets.length}
            categories={labels}
            titles={data.buckets.map((b, i) =>
              b.timeToComplete.count === 0
                ? `${words[i]}: no run completed`
                : `${words[i]}: ${b.timeToComplete.count} completed, median ${durationWords(b.timeToComplete.p50Ms)}, p90 ${durationWords(b.timeToComplete.p90Ms)}`,
            )}
            series={QUANTILES}
            values={values}
            ticks={durationTicks(max)}
            tickWords={(ms) => (ms === 0 ? '0' : durationWords(ms))}
          />
          <Legend series={QUANTILES} line />
        </>
      )}
      <FiguresTable
        data={data}
        words={words}
        caption={`Time to complete per ${data.bucket}`}
        columns={['Completed', 'Median', 'p90']}
        cells={(b) => [
          b.timeToComplete.count,
          durationWords(b.timeToComplete.p50Ms),
          durationWords(b.timeToComplete.p90Ms),
        ]}
      />
    </figure>
  );
}

type SortKey =
  'step' | 'template' | 'done' | 'p50' | 'p90' | 'late' | 'skipped' | 'rejected' | 'reopened';

interface Column {
  key: SortKey;
  label: string;
  /** What the figure is, when its name alone does not say. */
  help?: string;
  text?: boolean;
}

const COLUMNS: Column[] = [
  { key: 'step', label: 'Step', text: true },
  { key: 'template', label: 'Template', text: true },
  { key: 'done', label: 'Done', help: 'steps done (completed or approved) in the range' },
  { key: 'p50', label: 'Active time, median', help: 'how long the step was current' },
  { key: 'p90', label: 'Active time, p90' },
  { key: 'late', label: 'Late', help: 'of the steps done, those done after their due time' },
  { key: 'skipped', label: 'Skipped', help: 'of the steps done or skipped, those skipped' },
  { key: 'rejected', label: 'Rejected' },
  { key: 'reopened', label: 'Reopened' },
];

type SortDir = 'ascending' | 'descending';

/** An order in words: "A to Z", "highest first". */
function orderWords(column: Column, dir: SortDir): string {
  if (column.text) return dir === 'ascending' ? 'A to Z' : 'Z to A';
  return dir === 'descending' ? 'highest first' : 'lowest first';
}

function sortValue(step: StepFigures, key: SortKey, name: (id: string) => string) {
  switch (key) {
    case 'step':
      return step.step.toLocaleLowerCase();
    case 'template':
      return name(step.templateId).toLocaleLowerCase();
    case 'done':
      return step.completed;
    case 'p50':
      return step.activeTime.p50Ms ?? -1;
    case 'p90':
      return step.activeTime.p90Ms ?? -1;
    case 'late':
      return rateOf(step.late, step.completed);
    case 'skipped':
      return rateOf(step.skipped, step.completed + step.skipped);
    case 'rejected':
      return step.rejected;
    case 'reopened':
      return step.reopened;
  }
}

function StepsTable({
  data,
  names,
  byTemplate,
  order,
}: {
  data: RunInsights;
  names(id: string): string;
  byTemplate: boolean;
  order: string[] | undefined;
}) {
  const [sort, setSort] = useState<{ key: SortKey; dir: SortDir } | null>(null);
  const columns = COLUMNS.filter((c) => byTemplate || c.key !== 'template');
  const rows = inPageOrder(data.steps, order);
  if (sort) {
    const sign = sort.dir === 'ascending' ? 1 : -1;
    rows.sort((a, b) => {
      const x = sortValue(a, sort.key, names);
      const y = sortValue(b, sort.key, names);
      return x < y ? -sign : x > y ? sign : 0;
    });
  }
  const longest = Math.max(0, ...data.steps.map((s) => s.activeTime.p50Ms ?? 0));
  const sortBy = (column: Column) =>
    setSort((now) =>
      now?.key === column.key
        ? { key: column.key, dir: now.dir === 'ascending' ? 'descending' : 'ascending' }
        : { key: column.key, dir: column.text ? 'ascending' : 'descending' },
    );
  return (
    <section class="panel" aria-labelledby="insights-steps">
      <h2 id="insights-steps">Steps</h2>
      {data.steps.length === 0 ? (
        <Empty>No step was done, skipped or rejected in this range.</Empty>
      ) : (
        <>
          <p class="muted small">
            Steps that ended in the range. Active time is how long a step was current, for the steps
            done or rejected.<span class="wide-only"> Click a column's name to sort by it.</span>
          </p>
          {/* On a phone the table is cards, without its header: the order is chosen here. */}
          <div class="field insights-sort">
            <label for="insights-sort">
              <span>Order of the steps</span>
            </label>
            <select
              id="insights-sort"
              value={sort ? `${sort.key} ${sort.dir}` : ''}
              onChange={(event) => {
                const [key, dir] = event.currentTarget.value.split(' ');
                setSort(key ? { key: key as SortKey, dir: dir as SortDir } : null);
              }}
            >
              <option value="">{order ? 'As the pages go' : 'As the answer lists them'}</option>
              {columns.flatMap((column) =>
                (column.text
                  ? (['ascending', 'descending'] as const)
                  : (['descending', 'ascending'] as const)
                ).map((dir) => (
                  <option key={`${column.key} ${dir}`} value={`${column.key} ${dir}`}>
                    {column.label}, {orderWords(column, dir)}
                  </option>
                )),
              )}
            </select>
          </div>
          <table class="cards insights-steps">
            <caption class="tpl-sr">
              Steps,{' '}
              {sort
                ? `sorted by ${sort.key}, ${sort.dir}`
                : order
                  ? "in the order of the template's pages"
                  : 'in the order of the answer'}
            </caption>
            <thead>
              <tr>
                {columns.map((column) => (
                  <th
                    key={column.key}
                    scope="col"
                    aria-sort={sort?.key === column.key ? sort.dir : undefined}
                    class={column.text ? undefined : 'num'}
                  >
                    <button
                      type="button"
                      class="sort"
                      title={column.help}
                      onClick={() => sortBy(column)}
                    >
                      {column.label}
                      <span class="sort-mark" aria-hidden="true">
                        {sort?.key === column.key ? (sort.dir === 'ascending' ? '▲' : '▼') : '↕'}
                      </span>
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((step) => (
                <tr key={`${step.templateId}/${step.step}`} data-step={step.step}>
                  <td data-label="Step">
                    <strong>{step.step}</strong>
                  </td>
                  {byTemplate && (
                    <td data-label="Template">
                      <a href={href('/insights', { template_id: step.templateId })}>
                        {names(step.templateId)}
                      </a>
                    </td>
                  )}
                  <td data-label="Done" class="num">
                    {NUMBER.format(step.completed)}
                  </td>
                  <td data-label="Active time, median" class="num bar-cell">
                    <span>{durationWords(step.activeTime.p50Ms)}</span>
                    <CellBar
                      share={longest > 0 ? (step.activeTime.p50Ms ?? 0) / longest : 0}
                      tone="p50"
                    />
                  </td>
                  <td data-label="Active time, p90" class="num">
                    {durationWords(step.activeTime.p90Ms)}
                  </td>
                  <td data-label="Late" class="num">
                    {rateWords(step.late, step.completed)}
                    {step.late > 0 && <span class="muted"> ({step.late})</span>}
                  </td>
                  <td data-label="Skipped" class="num">
                    {rateWords(step.skipped, step.completed + step.skipped)}
                    {step.skipped > 0 && <span class="muted"> ({step.skipped})</span>}
                  </td>
                  <td data-label="Rejected" class="num">
                    {NUMBER.format(step.rejected)}
                  </td>
                  <td data-label="Reopened" class="num">
                    {NUMBER.format(step.reopened)}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}

/** The runs screen filtered to the active runs at a step (and, with `overdue`, overdue there). */
function stepRunsHref(templateId: string, step: string, overdue = false): string {
  const query: Record<string, string> = { template_id: templateId, status: 'active', step };
  if (overdue) query.overdue = 'true';
  return href('/runs', query);
}

function OpenRuns({
  data,
  names,
  byTemplate,
  order,
}: {
  data: RunInsights;
  names(id: string): string;
  byTemplate: boolean;
  order: string[] | undefined;
}) {
  const { open } = data;
  const most = Math.max(0, ...open.steps.map((s) => s.runs));
  return (
    <section class="panel" aria-labelledby="insights-open">
      <h2 id="insights-open">Open runs by step, now</h2>
      <p>
        {open.runs === 0
          ? 'No run is open now.'
          : `${NUMBER.format(open.runs)} open ${open.runs === 1 ? 'run' : 'runs'} now: ${NUMBER.format(open.pending)} waiting to start, ${NUMBER.format(open.overdue)} overdue.`}
      </p>
      {open.steps.length > 0 && (
        <table class="cards insights-open">
          <caption class="tpl-sr">Open runs at each step</caption>
          <thead>
            <tr>
              <th scope="col">Step</th>
              {byTemplate && <th scope="col">Template</th>}
              <th scope="col" class="num">
                At this step
              </th>
              <th scope="col" class="num">
                Overdue
              </th>
            </tr>
          </thead>
          <tbody>
            {inPageOrder(open.steps, order).map((s) => (
              <tr key={`${s.templateId}/${s.step}`} data-step={s.step}>
                <td data-label="Step">
                  <strong>{s.step}</strong>
                </td>
                {byTemplate && <td data-label="Template">{names(s.templateId)}</td>}
                <td data-label="At this step" class="num bar-cell">
                  <a href={stepRunsHref(s.templateId, s.step)}>
                    {NUMBER.format(s.runs)}
                    <span class="tpl-sr"> open at {s.step}</span>
                  </a>
                  <CellBar share={most > 0 ? s.runs / most : 0} tone="created" />
                </td>
                <td data-label="Overdue" class="num">
                  {s.overdue > 0 ? (
                    <a class="overdue" href={stepRunsHref(s.templateId, s.step, true)}>
                      {NUMBER.format(s.overdue)}
                      <span class="tpl-sr"> overdue at {s.step}</span>
                    </a>
                  ) : (
                    <span class="muted">0</span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
