// Organizations, keys and templates for tests, written through the service's own stores.
import { KeyStore } from '../../src/auth/key-store.js';
import type { Scope } from '../../src/auth/scopes.js';
import type { Db } from '../../src/db.js';
import { createOrganization } from '../../src/organizations.js';
import type { TemplateDefinition } from '../../src/templates/definition/definition-types.js';
import type { Template } from '../../src/templates/template.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import { newId } from '../../src/lib/ids.js';
import { newSecret } from '../../src/webhooks/signing.js';

export const TWO_STEP_TEMPLATE: TemplateDefinition = {
  name: 'Purchase request',
  pages: [
    {
      name: 'Request',
      dueInHours: 24,
      inputFields: [
        { inputId: 'item', fieldName: 'Item', required: true },
        { inputId: 'amount', fieldName: 'Amount', required: true },
        { inputId: 'note', fieldName: 'Note' },
      ],
    },
    {
      name: 'Approval',
      inputFields: [{ inputId: 'approver', fieldName: 'Approver', required: true }],
    },
  ],
};

export interface Tenant {
  orgId: string;
  key: string;
  keyId: string;
  template: Template;
}

let counter = 0;

export async function createTenant(
  db: Db,
  definition: TemplateDefinition = TWO_STEP_TEMPLATE,
): Promise<Tenant> {
  const org = await createOrganization(db, `Test org ${++counter}`);
  const key = await new KeyStore(db, 0).create(org.id, 'test');
  const template = await new TemplateStore(db).insert(org.id, definition);
  return { orgId: org.id, key: key.key, keyId: key.id, template };
}

/** A valid create-run body for the tenant's template. */
export function createBody(tenant: Tenant, extra: Record<string, unknown> = {}) {
  return {
    workflow_template_id: tenant.template.id,
    input_fields: { item: 'Laptop', amount: '1200' },
    user_assignments: { Request: 'alice', Approval: 'bob' },
    ...extra,
  };
}

/** Another key of an organization, as an operator makes it (every scope unless told). */
export async function createKey(
  db: Db,
  orgId: string,
  options: { name?: string; scopes?: readonly Scope[]; expiresAt?: Date } = {},
): Promise<{ id: string; key: string; prefix: string }> {
  const made = await new KeyStore(db, 0).create(orgId, options.name ?? 'test', options);
  return { id: made.id, key: made.key, prefix: made.key_prefix };
}

/**
 * An enabled webhook endpoint of the tenant's, made straight in MySQL as the service stores one
 * (owed every event after the newest committed so far); returns its id.
 */
export async function insertEndpoint(db: Db, tenant: Tenant, url: string): Promise<string> {
  const id = newId();
  const [[newest]] = (await db.raw('SELECT COALESCE(MAX(id), 0) AS last FROM run_events')) as [
    [{ last: number }],
  ];
  await db('webhook_endpoints').insert({
    id,
    organization_id: tenant.orgId,
    url,
    secret: newSecret(),
    enabled: 1,
    created_at: new Date(),
    from_event_id: newest!.last,
  });
  return id;
}

/**
 * Run events made straight in MySQL as the service commits them: each run's types as its
 * events seq 1, 2, …, the first naming the workflow.
 */
export async function insertRunEvents(
  db: Db,
  tenant: Tenant,
  runs: Record<string, readonly string[]>,
  workflowName: string,
): Promise<void> {
  const at = new Date();
  await db('run_events').insert(
    Object.entries(runs).flatMap(([runId, types]) =>
      types.map((type, i) => ({
        run_id: runId,
        organization_id: tenant.orgId,
        seq: i + 1,
        type,
        at,
        data: JSON.stringify(i === 0 ? { workflowName } : {}),
      })),
    ),
  );
}
