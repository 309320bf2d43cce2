// The audit log equals the actions taken, row for row: a script of administrative actions,
// over the API and with the admin CLI, by two organizations interleaved, each action checked
// to leave exactly its entry (or none, when refused), then each organization's whole log, in
// MySQL and over GET /get-audit-log, compared with its ledger. Another family of actions
// (templates, API keys: see test/support/audit-actions.ts) joins the script in a few lines.
import { AuditLedger, type AuditedAction } from '../support/audit.js';
import {
  keyActor,
  keyApiActions,
  templateApiActions,
  webhookApiActions,
  webhookCliActions,
  type Ids,
} from '../support/audit-actions.js';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

describe('the audit log equals the actions taken, row for row', function () {
  this.timeout(120000);

  let api: ApiProcess;
  let a: Tenant;
  let b: Tenant;

  before(async () => {
    api = await startApi({ WEBHOOK_MAX_ENDPOINTS: '3' });
    [a, b] = [await createTenant(testDb()), await createTenant(testDb())];
  });

  after(() => api?.stop());

  it('for templates, API keys and webhook endpoints, over the API and the admin CLI, in two organizations', async () => {
    const clientA = new Client(api.url, a.key);
    const clientB = new Client(api.url, b.key);
    const idsA: Ids = new Map();
    const idsB: Ids = new Map();
    const hooksA = webhookApiActions(clientA, keyActor(a.keyId, 'test'), idsA);
    const hooksB = webhookApiActions(clientB, keyActor(b.keyId, 'test'), idsB);
    const cliA = webhookCliActions(a.orgId, idsA);
    const templatesA = templateApiActions(clientA, keyActor(a.keyId, 'test'), idsA);
    const templatesB = templateApiActions(clientB, keyActor(b.keyId, 'test'), idsB);
    const keysA = keyApiActions(clientA, keyActor(a.keyId, 'test'), idsA);
    const keysB = keyApiActions(clientB, keyActor(b.keyId, 'test'), idsB);
    // Each log starts with the tenant's setup: its key and template, by the admin CLI.
    const ledgerA = await AuditLedger.forTenant(a);
    const ledgerB = await AuditLedger.forTenant(b);
    const url = (n: string) => `https://hooks.example.com/${n}`;

    // Each step: the organization whose log it must change, and the action.
    const script: Array<[AuditLedger, AuditedAction]> = [
      [ledgerA, hooksA.create('a1', url('a1'), ['run.failed'])],
      [ledgerB, hooksB.create('b1', url('b1'))],
      [ledgerA, cliA.create('a2', url('a2'))],
      [ledgerA, hooksA.rotate('a1')],
      [ledgerA, cliA.rotate('a2')],
      [ledgerA, hooksA.create('a3', url('a3'))],
      // At the limit (3), and other refusals: no entry anywhere.
      [ledgerA, hooksA.refused('/create-webhook-endpoint', { url: url('a4') }, 409)],
      [ledgerA, hooksA.refused('/create-webhook-endpoint', { url: 'https://10.0.0.1/x' }, 400)],
      [ledgerA, hooksA.refused('/delete-webhook-endpoint', { id: 'no-such-endpoint' }, 404)],
      [ledgerB, hooksB.refused('/rotate-webhook-secret', { id: 'no-such-endpoint' }, 404)],
      [ledgerA, cliA.refused(['delete-webhook-endpoint', '--id', 'no-such-endpoint'])],
      [ledgerA, cliA.refused(['create-webhook-endpoint', '--url', 'http://hooks.example.com/x'])],
      [ledgerB, hooksB.rotate('b1')],
      [ledgerA, hooksA.delete('a3', url('a3'))],
      [ledgerA, cliA.delete('a1', url('a1'))],
      [ledgerB, hooksB.delete('b1', url('b1'))],
      [ledgerA, hooksA.create('a5', url('a5'), ['run.created', 'run.completed'])],
      [ledgerA, hooksA.delete('a2', url('a2'))],
    ];
    // A's endpoint ids do not exist for B: refused, no entry.
    const foreign = (name: string) => ({
      name: `B acts on A's ${name}`,
      run: () => hooksB.refused('/delete-webhook-endpoint', { id: idsA.get(name) }, 404).run(),
    });
    script.push([ledgerB, foreign('a5')], [ledgerA, hooksA.rotate('a5')]);

    // Templates: created, saved as new versions, archived and restored; a stale save, an
    // archive of an archived template and a foreign id leave nothing.
    script.push(
      [ledgerA, templatesA.create('t1')],
      [ledgerB, templatesB.create('u1')],
      [ledgerA, templatesA.update('t1', 1, 'T1 v2')],
      [
        ledgerA,
        {
          name: 'a save from version 1, which is no longer the latest',
          run: () =>
            hooksA
              .refused(
                '/update-workflow-template',
                {
                  id: idsA.get('t1'),
                  expected_version: 1,
                  pages: [{ name: 'P', inputFields: [] }],
                },
                409,
              )
              .run(),
        },
      ],
      [ledgerA, templatesA.update('t1', 2, 'T1 v3')],
      [ledgerA, templatesA.setArchived('t1', true)],
      [ledgerA, templatesA.setArchived('t1', true, false)],
      [ledgerB, templatesB.setArchived('u1', true)],
      [ledgerA, templatesA.setArchived('t1', false)],
      [ledgerB, hooksB.refused('/archive-workflow-template', { id: 'no-such-template' }, 404)],
    );
    script.push([
      ledgerB,
      {
        name: "B archives A's template",
        run: () => hooksB.refused('/archive-workflow-template', { id: idsA.get('t1') }, 404).run(),
      },
    ]);

    // API keys: created, rolled (two entries: the roll and the new key), revoked; a grant the
    // key lacks and a foreign id leave nothing.
    script.push(
      [ledgerA, keysA.create('k1', ['runs:read'])],
      [ledgerB, keysB.create('l1', ['runs:read', 'runs:write'])],
      [ledgerA, keysA.roll('k1', 'k2', ['runs:read'])],
      [ledgerA, keysA.revoke('k2')],
      [ledgerA, hooksA.refused('/revoke-api-key', { id: 'no-such-key' }, 404)],
      [ledgerA, hooksA.refused('/create-api-key', { name: 'x', scopes: ['no:such'] }, 400)],
      [ledgerB, keysB.revoke('l1')],
    );
    script.push([
      ledgerB,
      {
        name: "B revokes A's key",
        run: () => hooksB.refused('/revoke-api-key', { id: idsA.get('k1') }, 404).run(),
      },
    ]);

    for (const [ledger, action] of script) {
      await ledger.act(action);
      // The other organization's log did not move.
      for (const bystander of [ledgerA, ledgerB].filter((l) => l !== ledger)) {
        await bystander.check(bystander === ledgerA ? clientA : clientB, 100);
      }
    }
    await ledgerA.check(clientA, 2);
    await ledgerB.check(clientB, 1);
  });
});
