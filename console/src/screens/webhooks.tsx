// Webhooks: the organization's endpoints, a form to subscribe one, rotate and delete on each,
// and the delivery log of the endpoint named in the URL (?endpoint=<id>, with ?status= and
// ?run= filters), keyset-paged, with every attempt and a redeliver action. The log follows
// deliveries still owed (and a redelivery) without a reload. A signing secret is in the one
// answer that makes it (subscribe, rotate), so it is shown once, with a copy button.
import { useEffect, useState } from 'preact/hooks';
import type {
  GetWebhookDeliveriesQuery,
  Page,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from 'workflow-run-client';
import { fieldOf, messageOf } from '../api.js';
import { href, navigate, type Location } from '../router.js';
import {
  ActionButton,
  confirmAction,
  Empty,
  ErrorBanner,
  FieldMessage,
  fieldError,
  Loading,
  namesField,
  ScreenHeader,
  Time,
  useConsole,
  useLoad,
  useNotice,
  LoadMore,
} from '../ui.js';
import {
  DELIVERY_STATUSES,
  EVENT_TYPES,
  type DeliveryStatus,
  type EventType,
} from '../vocabulary.js';
import { ShownOnce } from './keys.js';

const PAGE_SIZE = 25;
/** How often the log is read again: while a delivery is owed, and otherwise. */
const POLL_PENDING_MS = 2000;
const POLL_IDLE_MS = 5000;

const withoutSecret = ({
  secret: _secret,
  ...endpoint
}: WebhookEndpointWithSecret): WebhookEndpoint => endpoint;

function EventList({ events }: { events: EventType[] }) {
  if (EVENT_TYPES.every((type) => events.includes(type))) {
    return <span>every event type</span>;
  }
  return (
    <ul class="scope-list">
      {events.map((type) => (
        <li key={type}>{type}</li>
      ))}
    </ul>
  );
}

function EndpointState({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <>
      <span class={`badge ${endpoint.enabled ? 'status-completed' : 'status-failed'}`}>
        {endpoint.enabled ? 'enabled' : 'disabled'}
      </span>
      {!endpoint.enabled && (
        <div class="small">
          {endpoint.disabledReason ?? 'disabled'}
          {endpoint.disabledAt && (
            <>
              {' '}
              (<Time value={endpoint.disabledAt} />)
            </>
          )}
        </div>
      )}
      {endpoint.failingSince && (
        <div class="small warn-text">
          failing since <Time value={endpoint.failingSince} />
        </div>
      )}
      {endpoint.previousSecretExpiresAt && (
        <div class="small muted">
          old secret signs too until <Time value={endpoint.previousSecretExpiresAt} />
        </div>
      )}
    </>
  );
}

function SubscribeForm({
  onCreated,
  onCancel,
}: {
  onCreated(endpoint: WebhookEndpointWithSecret): void;
  onCancel(): void;
}) {
  const { api } = useConsole();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<EventType[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const urlError = fieldError(error, '/url');
  const descriptionError = fieldError(error, '/description');
  const eventsError = fieldOf(error)?.startsWith('/events') ? messageOf(error) : undefined;
  const shown = (field: string) =>
    field === '/url' || field === '/description' || field.startsWith('/events');
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const made = await api.createWebhookEndpoint({
        url: url.trim(),
        events: events.length ? events : undefined,
        description: description.trim() || undefined,
      });
      onCreated(made);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel subscribe" aria-labelledby="subscribe-title" onSubmit={submit}>
      <h2 id="subscribe-title">Subscribe an endpoint</h2>
      {!namesField(error, shown) && <ErrorBanner error={error} />}
      <label class="field" for="endpoint-url">
        <span>URL</span>
        <input
          id="endpoint-url"
          type="url"
          required
          maxLength={2048}
          placeholder="https://hooks.example.com/wrs"
          value={url}
          aria-invalid={urlError ? true : undefined}
          aria-describedby={urlError ? 'endpoint-url-error' : undefined}
          onInput={(event) => setUrl(event.currentTarget.value)}
        />
        <FieldMessage id="endpoint-url-error" message={urlError} />
      </label>
      <label class="field" for="endpoint-description">
        <span>Description (optional)</span>
        <input
          id="endpoint-description"
          maxLength={500}
          value={description}
          aria-invalid={descriptionError ? true : undefined}
          aria-describedby={descriptionError ? 'endpoint-description-error' : undefined}
          onInput={(event) => setDescription(event.currentTarget.value)}
        />
        <FieldMessage id="endpoint-description-error" message={descriptionError} />
      </label>
      <fieldset
        class="scopes"
        aria-describedby={eventsError ? 'endpoint-events-error events-help' : 'events-help'}
      >
        <legend>Event types</legend>
        <p id="events-help" class="muted small">
          Leave every box unchecked to receive every event type.
        </p>
        <ul class="scope-choices">
          {EVENT_TYPES.map((type) => (
            <li key={type}>
              <label class="check">
                <input
                  type="checkbox"
                  name="events"
                  value={type}
                  checked={events.includes(type)}
                  onChange={(event) =>
                    setEvents(
                      event.currentTarget.checked
                        ? EVENT_TYPES.filter((t) => t === type || events.includes(t))
                        : events.filter((t) => t !== type),
                    )
                  }
                />{' '}
                {type}
              </label>
            </li>
          ))}
        </ul>
        <FieldMessage id="endpoint-events-error" message={eventsError} />
      </fieldset>
      <div class="buttons">
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
        <ActionButton scope="webhooks:write" type="submit" class="primary" disabled={busy}>
          {busy ? 'Subscribing…' : 'Subscribe'}
        </ActionButton>
      </div>
    </form>
  );
}

function EndpointRow({
  endpoint,
  selected,
  query,
  onRotate,
  onDelete,
}: {
  endpoint: WebhookEndpoint;
  selected: boolean;
  query: URLSearchParams;
  onRotate(): void;
  onDelete(): void;
}) {
  const logQuery = new URLSearchParams(query);
  logQuery.set('endpoint', endpoint.id);
  logQuery.delete('status');
  logQuery.delete('run');
  return (
    <tr class={selected ? 'selected' : undefined}>
      <td data-label="URL">
        <code class="mono">{endpoint.url}</code>
        {endpoint.description && <div class="muted small">{endpoint.description}</div>}
      </td>
      <td data-label="Event types">
        <EventList events={endpoint.events} />
      </td>
      <td data-label="Created">
        <Time value={endpoint.createdAt} />
      </td>
      <td data-label="State">
        <EndpointState endpoint={endpoint} />
      </td>
      <td data-label="Actions">
        <div class="row-actions">
          <a
            class="button"
            href={href('/webhooks', logQuery)}
            aria-current={selected ? 'true' : undefined}
            aria-label={`Delivery log of ${endpoint.url}`}
          >
            Delivery log
          </a>
          <ActionButton
            scope="webhooks:write"
            aria-label={`Rotate secret of ${endpoint.url}`}
            onClick={onRotate}
          >
            Rotate secret
          </ActionButton>
          <ActionButton
            scope="webhooks:write"
            class="danger"
            aria-label={`Delete ${endpoint.url}`}
            onClick={onDelete}
          >
            Delete
          </ActionButton>
        </div>
      </td>
    </tr>
  );
}

const DELIVERY_CLASS: Record<DeliveryStatus, string> = {
  pending: 'status-pending',
  delivered: 'status-completed',
  failed: 'status-failed',
};

function Attempts({ delivery }: { delivery: WebhookDelivery }) {
  if (delivery.attempts.length === 0) return <span class="muted">none yet</span>;
  return (
    <ol class="attempts">
      {delivery.attempts.map((attempt, index) => (
        <li key={index}>
          <Time value={attempt.at} />{' '}
          <span class="mono">
            {attempt.statusCode !== undefined ? `HTTP ${attempt.statusCode}` : 'no answer'}
          </span>{' '}
          <span class="muted">
            {attempt.latencyMs} ms, round {attempt.round}
          </span>
          {attempt.error && <div class="small warn-text">{attempt.error}</div>}
        </li>
      ))}
    </ol>
  );
}

function DeliveryRow({
  delivery,
  onRedeliver,
}: {
  delivery: WebhookDelivery;
  onRedeliver(): void;
}) {
  return (
    <tr>
      <td data-label="Event">
        {delivery.eventType}
        <div class="muted small">
          <span class="mono">{delivery.webhookId}</span>, #{delivery.eventSeq} of the run
        </div>
      </td>
      <td data-label="Run">
        <a href={href(`/runs/${encodeURIComponent(delivery.runId)}`)}>
          <code class="mono">{delivery.runId}</code>
        </a>
      </td>
      <td data-label="Status">
        <span class={`badge ${DELIVERY_CLASS[delivery.status]}`}>{delivery.status}</span>
        {delivery.round > 1 && <div class="muted small">round {delivery.round}</div>}
        {delivery.status === 'pending' && delivery.nextAttemptAt && (
          <div class="muted small">
            next try <Time value={delivery.nextAttemptAt} />
          </div>
        )}
        {delivery.deliveredAt && (
          <div class="muted small">
            delivered <Time value={delivery.deliveredAt} />
          </div>
        )}
      </td>
      <td data-label="Created">
        <Time value={delivery.createdAt} />
      </td>
      <td data-label="Attempts">
        <Attempts delivery={delivery} />
      </td>
      <td data-label="Actions">
        <div class="row-actions">
          <ActionButton
            scope="webhooks:write"
            aria-label={`Redeliver ${delivery.eventType} ${delivery.webhookId}`}
            onClick={onRedeliver}
          >
            Redeliver
          </ActionButton>
        </div>
      </td>
    </tr>
  );
}

/** The first page read again, merged with the pages already shown (newest first). */
function merged(
  current: Page<WebhookDelivery> | undefined,
  fresh: Page<WebhookDelivery>,
): Page<WebhookDelivery> {
  if (!current || current.items.length <= PAGE_SIZE) return fresh;
  const ids = new Set(fresh.items.map((d) => d.id));
  return {
    items: [...fresh.items, ...current.items.filter((d) => !ids.has(d.id))],
    nextCursor: current.nextCursor,
    nextUrl: current.nextUrl,
  };
}

function DeliveryLog({ endpoint, location }: { endpoint: WebhookEndpoint; location: Location }) {
  const { api } = useConsole();
  const statusParam = location.query.get('status');
  const status = DELIVERY_STATUSES.find((s) => s === statusParam);
  const run = location.query.get('run') ?? '';
  const [runDraft, setRunDraft] = useState(run);
  useEffect(() => setRunDraft(run), [run]);
  const query: GetWebhookDeliveriesQuery = {
    endpoint_id: endpoint.id,
    status,
    run_id: run || undefined,
    limit: PAGE_SIZE,
  };
  const deliveries = useLoad(
    (a) => a.page('getWebhookDeliveries', query),
    [endpoint.id, status, run],
  );
  const [actionError, setActionError] = useState<unknown>(null);
  const [pollError, setPollError] = useState<unknown>(null);
  const [polls, setPolls] = useState(0);
  const [notice, notify] = useNotice();
  const owed = deliveries.data?.items.some((d) => d.status === 'pending') ?? false;

  // Follows the log: read the first page again, sooner while a delivery is owed.
  useEffect(() => {
    if (!deliveries.data) return;
    let cancelled = false;
    const timer = setTimeout(
      () => {
        api.page('getWebhookDeliveries', query).then(
          (fresh) => {
            if (cancelled) return;
            setPollError(null);
            deliveries.set((current) => merged(current, fresh));
            setPolls((n) => n + 1);
          },
          (error: unknown) => {
            if (cancelled) return;
            setPollError(error);
            setPolls((n) => n + 1);
          },
        );
      },
      owed ? POLL_PENDING_MS : POLL_IDLE_MS,
    );
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [endpoint.id, status, run, owed, polls, deliveries.data === undefined]);

  const setFilter = (name: 'status' | 'run', value: string) => {
    const next = new URLSearchParams(location.query);
    if (value) next.set(name, value);
    else next.delete(name);
    navigate('/webhooks', next, true);
  };

  const redeliver = async (delivery: WebhookDelivery) => {
    const ok = await confirmAction({
      title: 'Redeliver this event?',
      body: (
        <p>
          {delivery.eventType} ({delivery.webhookId}) is sent to <code>{endpoint.url}</code> again
          now, in a new round of attempts. The receiver sees the same webhook-id.
        </p>
      ),
      confirm: 'Redeliver',
    });
    if (!ok) return;
    setActionError(null);
    try {
      const updated = await api.redeliverWebhook({
        delivery_id: delivery.id,
      });
      deliveries.set((page) =>
        page
          ? { ...page, items: page.items.map((d) => (d.id === updated.id ? updated : d)) }
          : page,
      );
      notify(`${delivery.eventType} is being delivered again.`);
    } catch (e) {
      setActionError(e);
    }
  };

  return (
    <section class="panel delivery-log" aria-labelledby="log-title">
      <h2 id="log-title">
        Delivery log of <code class="mono">{endpoint.url}</code>
      </h2>
      {notice}
      <form
        class="filters"
        aria-label="Filter deliveries"
        onSubmit={(event) => {
          event.preventDefault();
          setFilter('run', runDraft.trim());
        }}
      >
        <label class="field" for="delivery-status">
          <span>Status</span>
          <select
            id="delivery-status"
            value={status ?? ''}
            onChange={(event) => setFilter('status', event.currentTarget.value)}
          >
            <option value="">Any status</option>
            {DELIVERY_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label class="field" for="delivery-run">
          <span>Run id</span>
          <span class="inline">
            <input
              id="delivery-run"
              value={runDraft}
              onInput={(event) => setRunDraft(event.currentTarget.value)}
            />
            <button type="submit">Apply</button>
          </span>
        </label>
      </form>
      <ErrorBanner error={actionError} />
      <ErrorBanner error={pollError} title="The log could not be refreshed" />
      {deliveries.error !== undefined && !deliveries.data && (
        <ErrorBanner error={deliveries.error} title="The delivery log could not be loaded" />
      )}
      {deliveries.loading && !deliveries.data && <Loading what="the delivery log" />}
      {deliveries.data && deliveries.data.items.length === 0 && (
        <Empty>
          {status || run
            ? 'No delivery matches this filter.'
            : 'Nothing was delivered to this endpoint yet: it is owed the events committed after it was subscribed.'}
        </Empty>
      )}
      {deliveries.data && deliveries.data.items.length > 0 && (
        <table class="cards deliveries">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Created</th>
              <th scope="col">Attempts</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.items.map((delivery) => (
              <DeliveryRow
                key={delivery.id}
                delivery={delivery}
                onRedeliver={() => void redeliver(delivery)}
              />
            ))}
          </tbody>
        </table>
      )}
      <LoadMore
        list={deliveries}
        fetch={(cursor) => api.page('getWebhookDeliveries', { ...query, cursor })}
      />
    </section>
  );
}

export function WebhooksScreen({ location }: { location: Location }) {
  const { api } = useConsole();
  const selectedId = location.query.get('endpoint');
  const endpoints = useLoad((a) => a.getWebhookEndpoints(), []);
  const [subscribing, setSubscribing] = useState(false);
  const [secret, setSecret] = useState<{
    title: string;
    endpoint: WebhookEndpointWithSecret;
  } | null>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [notice, notify] = useNotice();
  const selected = endpoints.data?.find((e) => e.id === selectedId);

  const rotate = async (endpoint: WebhookEndpoint) => {
    const ok = await confirmAction({
      title: 'Rotate the signing secret?',
      body: (
        <p>
          A new secret is made for <code>{endpoint.url}</code> and shown once. The old one keeps
          signing beside it for 24 hours, so the receiver can switch without losing deliveries.
        </p>
      ),
      confirm: 'Rotate secret',
    });
    if (!ok) return;
    setActionError(null);
    try {
      const rotated = await api.rotateWebhookSecret({ id: endpoint.id });
      setSecret({ title: `New signing secret for ${rotated.url}`, endpoint: rotated });
      endpoints.set((list) => list?.map((e) => (e.id === rotated.id ? withoutSecret(rotated) : e)));
    } catch (e) {
      setActionError(e);
    }
  };

  const remove = async (endpoint: WebhookEndpoint) => {
    const ok = await confirmAction({
      title: 'Delete this endpoint?',
      body: (
        <p>
          Nothing more is sent to <code>{endpoint.url}</code>, and its delivery log is deleted with
          it. This cannot be undone.
        </p>
      ),
      confirm: 'Delete endpoint',
      danger: true,
    });
    if (!ok) return;
    setActionError(null);
    try {
      await api.deleteWebhookEndpoint({ id: endpoint.id });
      endpoints.set((list) => list?.filter((e) => e.id !== endpoint.id));
      if (secret?.endpoint.id === endpoint.id) setSecret(null);
      if (selectedId === endpoint.id) navigate('/webhooks', {}, true);
      notify(`Endpoint ${endpoint.url} deleted.`);
    } catch (e) {
      setActionError(e);
    }
  };

  return (
    <section class="webhooks-screen">
      <ScreenHeader title="Webhooks">
        {!subscribing && (
          <ActionButton scope="webhooks:write" class="primary" onClick={() => setSubscribing(true)}>
            Subscribe an endpoint
          </ActionButton>
        )}
      </ScreenHeader>
      {notice}
      {secret && (
        <ShownOnce
          title={secret.title}
          label="signing secret"
          secret={secret.endpoint.secret}
          onDone={() => setSecret(null)}
        >
          <p class="muted">
            Receivers verify each delivery's webhook-signature with it (Standard Webhooks).
          </p>
        </ShownOnce>
      )}
      {subscribing && (
        <SubscribeForm
          onCancel={() => setSubscribing(false)}
          onCreated={(made) => {
            setSubscribing(false);
            setSecret({ title: `Endpoint subscribed: ${made.url}`, endpoint: made });
            endpoints.set((list) => [...(list ?? []), withoutSecret(made)]);
          }}
        />
      )}
      <section class="panel" aria-labelledby="endpoints-title">
        <h2 id="endpoints-title">Endpoints</h2>
        <ErrorBanner error={actionError} />
        {endpoints.error !== undefined && !endpoints.data && (
          <ErrorBanner error={endpoints.error} title="The endpoints could not be loaded" />
        )}
        {endpoints.loading && !endpoints.data && <Loading what="endpoints" />}
        {endpoints.data && endpoints.data.length === 0 && (
          <Empty>No endpoint is subscribed yet: events go nowhere.</Empty>
        )}
        {endpoints.data && endpoints.data.length > 0 && (
          <table class="cards endpoints">
            <thead>
              <tr>
                <th scope="col">URL</th>
                <th scope="col">Event types</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.data.map((endpoint) => (
                <EndpointRow
                  key={endpoint.id}
                  endpoint={endpoint}
                  selected={endpoint.id === selectedId}
                  query={location.query}
                  onRotate={() => void rotate(endpoint)}
                  onDelete={() => void remove(endpoint)}
                />
              ))}
            </tbody>
          </table>
        )}
      </section>
      {selectedId && endpoints.data && !selected && (
        <div class="banner error" role="alert">
          There is no endpoint {selectedId} in this organization.{' '}
          <a href={href('/webhooks')}>Show every endpoint</a>.
        </div>
      )}
      {selected && <DeliveryLog key={selected.id} endpoint={selected} location={location} />}
    </section>
  );
}
