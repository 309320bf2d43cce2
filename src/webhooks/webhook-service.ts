// The webhook endpoints' logic, behind thin routes: subscribing (the URL checked against the
// operator's policy, a new secret), listing, deleting, rotating a secret, the delivery log and
// redelivery. Every call is scoped to the caller's organization: another organization's ids
// are not found.
import type { NewAuditEntry } from '../audit/audit-events.js';
import type { Principal } from '../auth/principal.js';
import type { WebhookConfig } from '../config.js';
import { DomainError, pointer } from '../errors.js';
import { answered, type IdempotencyClaim } from '../idempotency/idempotency-keys.js';
import { newId } from '../lib/ids.js';
import { beginWrite, type WriteGate } from '../lib/deadline.js';
import type { DeliveryJobs } from '../jobs/webhook-delivery.js';
import type { DeliveryFilter, DeliveryLogStore } from './delivery-log-store.js';
import type { AttemptRow, DeliveryRow } from './delivery-rows.js';
import type { Endpoint, EndpointStore } from './endpoint-store.js';
import { newSecret } from './signing.js';
import { RefusedUrlError, checkEndpointUrl } from './url-policy.js';
import type {
  CreateEndpointBody,
  WebhookDeliveryView,
  WebhookEndpointView,
  WebhookEndpointWithSecret,
} from './webhook-schemas.js';
import { toDeliveryView, toEndpointView } from './webhook-views.js';

/** How long a secret replaced by a rotation keeps signing beside the new one. */
export const ROTATION_OVERLAP_MS = 24 * 3600 * 1000;

/** The key a request claimed, with its answer (idempotency-keys' answered). */
const jsonAnswer = (claim: IdempotencyClaim | undefined, status: number, body: unknown) =>
  answered(claim, status, () => JSON.stringify(body));

const endpointNotFound = (id: string) =>
  new DomainError('endpoint_not_found', `webhook endpoint '${id}' not found`);

/**
 * Who asks: an API key (its organization, and itself as the actor of its changes), or an
 * operator naming an organization (admin CLI, actor ADMIN_CLI).
 */
export type Caller = Pick<Principal, 'organizationId' | 'actor'>;

/** The audit entries of the endpoints' changes: no secret in any of them. */
const audit = {
  created: (caller: Caller, e: Omit<Endpoint, 'fromEventId'>): NewAuditEntry => ({
    organizationId: caller.organizationId,
    type: 'webhook_endpoint.created',
    actor: caller.actor,
    targetId: e.id,
    data: { url: e.url, ...(e.eventTypes ? { events: [...e.eventTypes] } : {}) },
    at: e.createdAt,
  }),
  deleted: (caller: Caller, e: Endpoint, at: Date): NewAuditEntry => ({
    organizationId: caller.organizationId,
    type: 'webhook_endpoint.deleted',
    actor: caller.actor,
    targetId: e.id,
    data: { url: e.url },
    at,
  }),
  secretRotated: (caller: Caller, id: string, previousUntil: Date, at: Date): NewAuditEntry => ({
    organizationId: caller.organizationId,
    type: 'webhook_endpoint.secret_rotated',
    actor: caller.actor,
    targetId: id,
    data: { previousSecretExpiresAt: previousUntil.toISOString() },
    at,
  }),
};

export class WebhookService {
  constructor(
    private readonly endpoints: EndpointStore,
    private readonly deliveries: DeliveryLogStore,
    private readonly config: WebhookConfig,
    /** Enqueues redeliveries; without it (the admin CLI), the reconciler enqueues them. */
    private readonly jobs?: DeliveryJobs,
  ) {}

  async createEndpoint(
    principal: Caller,
    body: CreateEndpointBody,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<WebhookEndpointWithSecret> {
    let url: string;
    try {
      url = checkEndpointUrl(body.url, this.config);
    } catch (err) {
      if (err instanceof RefusedUrlError) {
        throw new DomainError('invalid_url', err.message, pointer('url'));
      }
      throw err;
    }
    const endpoint = {
      id: newId(),
      organizationId: principal.organizationId,
      url,
      description: body.description ?? null,
      eventTypes: body.events ? [...body.events] : undefined,
      secret: newSecret(),
      previousSecret: null,
      previousSecretExpiresAt: null,
      enabled: true,
      disabledReason: null,
      disabledAt: null,
      failingSince: null,
      createdAt: new Date(),
    };
    const answer = { ...toEndpointView({ ...endpoint, fromEventId: 0 }), secret: endpoint.secret };
    beginWrite(gate);
    const stored = await this.endpoints.insert(
      endpoint,
      this.config.maxEndpoints,
      audit.created(principal, endpoint),
      jsonAnswer(claim, 200, answer),
    );
    if (!stored) {
      throw new DomainError(
        'endpoint_limit_reached',
        `an organization may have at most ${this.config.maxEndpoints} webhook endpoints`,
      );
    }
    return answer;
  }

  async listEndpoints(principal: Caller): Promise<WebhookEndpointView[]> {
    const now = new Date();
    return (await this.endpoints.list(principal.organizationId)).map((e) => toEndpointView(e, now));
  }

  async deleteEndpoint(
    principal: Caller,
    id: string,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<{ id: string; deleted: true }> {
    const answer = { id, deleted: true as const };
    beginWrite(gate);
    const deleted = await this.endpoints.delete(
      principal.organizationId,
      id,
      (e) => audit.deleted(principal, e, new Date()),
      jsonAnswer(claim, 200, answer),
    );
    if (!deleted) throw endpointNotFound(id);
    return answer;
  }

  async rotateSecret(
    principal: Caller,
    id: string,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<WebhookEndpointWithSecret> {
    const now = new Date();
    const secret = newSecret();
    const view = (e: Parameters<typeof toEndpointView>[0]) => ({
      ...toEndpointView(e, now),
      secret,
    });
    const previousUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
    beginWrite(gate);
    const rotated = await this.endpoints.rotateSecret(
      principal.organizationId,
      id,
      secret,
      previousUntil,
      (e) => audit.secretRotated(principal, e.id, previousUntil, now),
      (e) => jsonAnswer(claim, 200, view(e)),
    );
    if (!rotated) throw endpointNotFound(id);
    return view(rotated);
  }

  async listDeliveries(
    principal: Caller,
    filter: DeliveryFilter,
    limit: number,
    beforeSeq: number | null,
  ): Promise<Array<{ seq: number; view: WebhookDeliveryView }>> {
    const page = await this.deliveries.list(principal.organizationId, filter, limit, beforeSeq);
    return page.map(({ delivery, attempts }) => ({
      seq: Number(delivery.seq),
      view: toDeliveryView(delivery, attempts),
    }));
  }

  /** Owes a delivery again, now; the attempt follows the commit (or the reconciler makes it). */
  async redeliver(
    principal: Caller,
    deliveryId: string,
    gate: WriteGate,
    claim?: IdempotencyClaim,
  ): Promise<WebhookDeliveryView> {
    beginWrite(gate);
    const view = (d: DeliveryRow, attempts: AttemptRow[]) => toDeliveryView(d, attempts);
    const result = await this.deliveries.redeliver(
      principal.organizationId,
      deliveryId,
      new Date(),
      (d, attempts) => jsonAnswer(claim, 202, view(d, attempts)),
    );
    if (result === 'not_found') {
      throw new DomainError('delivery_not_found', `webhook delivery '${deliveryId}' not found`);
    }
    if (result === 'disabled') {
      throw new DomainError(
        'endpoint_disabled',
        'the endpoint of this delivery is disabled; create a new endpoint',
      );
    }
    const { delivery, attempts } = result;
    // Due now: the endpoint's turn now, whatever timer it has for the delivery's backoff.
    await this.jobs?.enqueue([{ endpointId: delivery.endpoint_id }]);
    return view(delivery, attempts);
  }
}
