// GET /openapi.json: an OpenAPI 3.1 document generated from the routes' contracts, valid by a
// third-party validator, describing every route, and for the spec's three endpoints the spec's
// field names and types exactly.
import { Validator } from '@seriousme/openapi-schema-validator';
import { expect } from 'chai';
import { isScope } from '../../src/auth/scopes.js';
import { RUN_EVENT_TYPES } from '../../src/runs/run-events.js';
import { request } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { specSchemas } from '../support/spec-schemas.js';

type Json = Record<string, unknown>;

describe('the API document: GET /openapi.json', () => {
  let api: ApiProcess;
  let document: Json;

  before(async () => {
    api = await startApi({ BASE_PATH: '/api/v1' });
    const res = await request<Json>(`${api.url}/openapi.json`); // no key needed
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/application\/json/);
    document = res.body;
  });

  after(() => api?.stop());

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? [], JSON.stringify(result.errors ?? []).slice(0, 2000)).to.deep.equal(
      [],
    );
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
    expect(document.servers).to.deep.equal([{ url: '/api/v1' }]);
  });

  it('describes every route, its key, its bodies and its answers', () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    expect(Object.keys(paths).sort()).to.deep.equal(
      [
        '/cancel-workflow-run',
        '/claim-workflow-step',
        '/complete-workflow-step',
        '/create-workflow-run',
        '/get-workflow-run',
        '/get-workflow-runs',
        '/get-workflow-templates',
        '/create-workflow-template',
        '/update-workflow-template',
        '/get-workflow-template',
        '/get-workflow-template-versions',
        '/archive-workflow-template',
        '/assign-workflow-step',
        '/restore-workflow-template',
        '/retry-workflow-run',
        '/bulk-cancel-workflow-runs',
        '/bulk-retry-workflow-runs',
        '/bulk-migrate-workflow-runs',
        '/migrate-workflow-run',
        '/create-workflow-schedule',
        '/update-workflow-schedule',
        '/pause-workflow-schedule',
        '/resume-workflow-schedule',
        '/delete-workflow-schedule',
        '/trigger-workflow-schedule',
        '/backfill-workflow-schedule',
        '/get-workflow-schedule',
        '/get-workflow-schedules',
        '/get-workflow-schedule-history',
        '/get-run-insights',
        '/get-bulk-action',
        '/create-webhook-endpoint',
        '/get-webhook-endpoints',
        '/delete-webhook-endpoint',
        '/rotate-webhook-secret',
        '/get-webhook-deliveries',
        '/redeliver-webhook',
        '/get-audit-log',
        '/create-api-key',
        '/get-api-keys',
        '/revoke-api-key',
        '/roll-api-key',
        '/delete-workflow-run',
        '/get-organization-settings',
        '/update-organization-settings',
        '/stream-run-events',
        '/unclaim-workflow-step',
        '/get-tasks',
        '/count-workflow-runs',
        '/get-current-api-key',
      ].sort(),
    );
    const create = paths['/create-workflow-run']!.post!;
    expect(create.operationId).to.equal('createWorkflowRun');
    // The operation's scope, as OpenAPI 3.1 lets a non-OAuth scheme name the roles it needs.
    expect(create.security).to.deep.equal([{ apiKey: ['runs:write'] }]);
    expect(create['x-scope']).to.equal('runs:write');
    expect(create.requestBody).to.deep.include({ required: true });
    expect(Object.keys(create.responses as Json)).to.include.members([
      '200',
      '400',
      '403',
      '409',
      '422',
      '429',
      '500',
      '503',
    ]);
    const headers = (create.parameters as Json[]).map((p) => `${String(p.in)}:${String(p.name)}`);
    expect(headers).to.include('header:Idempotency-Key');
    const list = paths['/get-workflow-runs']!.get!;
    const names = (list.parameters as Json[]).map((p) => p.name);
    expect(names).to.include.members(['limit', 'cursor', 'status', 'assignee', 'overdue']);
    const ok = (list.responses as Record<string, Json>)['200']!;
    expect(ok.headers).to.have.property('Link');
    const update = paths['/update-workflow-template']!.post!;
    expect(update['x-scope']).to.equal('templates:write');
    expect(paths['/get-workflow-template-versions']!.get!['x-scope']).to.equal('templates:read');
    const conflicts = (update.responses as Record<string, Json>)['409']!;
    expect(JSON.stringify(conflicts)).to.match(/template_version_conflict/);
    const schemes = (document.components as Json).securitySchemes as Json;
    expect(schemes.apiKey).to.deep.include({ type: 'apiKey', in: 'header', name: 'Authorization' });
  });

  it('describes what the service sends to a webhook endpoint, as OpenAPI 3.1 webhooks', () => {
    const webhooks = document.webhooks as Record<string, Record<string, Json>>;
    const post = webhooks.runEvent!.post!;
    const body = (post.requestBody as Json).content as Record<string, { schema: Json }>;
    expect(body['application/json']!.schema).to.deep.equal({
      $ref: '#/components/schemas/WebhookPayload',
    });
    const headers = (post.parameters as Json[]).map((p) => p.name);
    expect(headers).to.have.members(['webhook-id', 'webhook-timestamp', 'webhook-signature']);
    // One branch per event type, each with that type's data (and the actor).
    const payload = (document.components as { schemas: Record<string, Json> }).schemas
      .WebhookPayload!;
    expect((payload.oneOf as Json[]).length).to.equal(RUN_EVENT_TYPES.length);
  });

  it('names the one scope of every operation, in its security, x-scope and description', () => {
    const paths = document.paths as Record<string, Record<string, Json>>;
    for (const [path, operations] of Object.entries(paths)) {
      for (const operation of Object.values(operations)) {
        if (path === '/get-current-api-key') {
          // Any key may describe itself: no scope, and the document says so.
          expect(operation['x-scope'], path).to.equal(undefined);
          expect(operation.security, path).to.deep.equal([{ apiKey: [] }]);
          expect(operation.description, path).to.contain('Any key, whatever its scopes.');
          continue;
        }
        const scope = operation['x-scope'] as string;
        expect(isScope(scope), `${path}: ${scope}`).to.equal(true);
        expect(operation.security, path).to.deep.equal([{ apiKey: [scope] }]);
        expect(operation.description, path).to.contain(`Scope: \`${scope}\``);
      }
    }
  });

  it('gives the spec’s three resources the spec’s field names and types', () => {
    const schemas = (document.components as Json).schemas as Record<string, Json>;
    const pairs: Array<[string, Json]> = [
      ['WorkflowRun', specSchemas.WorkflowRun as unknown as Json],
      [
        'WorkflowRunSummary',
        (specSchemas.WorkflowRunSummaryList as unknown as { items: Json }).items,
      ],
      ['WorkflowTemplate', (specSchemas.WorkflowTemplateList as unknown as { items: Json }).items],
    ];
    for (const [name, spec] of pairs) {
      const ours = schemas[name]!;
      const specProps = spec.properties as Record<string, { type: string; format?: string }>;
      const ourProps = ours.properties as Record<string, { type: string; format?: string }>;
      expect(Object.keys(ourProps).sort(), name).to.deep.equal(Object.keys(specProps).sort());
      for (const [field, type] of Object.entries(specProps)) {
        expect(ourProps[field]!.type, `${name}.${field}`).to.equal(type.type);
        expect(ourProps[field]!.format, `${name}.${field} format`).to.equal(type.format);
      }
      expect(ours.additionalProperties, name).to.equal(false);
    }
  });
});
