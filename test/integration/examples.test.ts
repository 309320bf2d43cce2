// The scripts in examples/ run as a user would run them, against a real API and worker: each
// exits 0 having done what it says.
import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { WorkflowRunClient } from 'workflow-run-client';
import { createTenant, type Tenant } from '../support/fixtures.js';
import {
  startApi,
  startWorker,
  type ApiProcess,
  type ServiceProcess,
} from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';
import { WEBHOOK_TEST_ENV } from '../support/webhook-receiver.js';

const examples = fileURLToPath(new URL('../../examples/', import.meta.url));

describe('examples/', function () {
  this.timeout(60000);
  let api: ApiProcess;
  let worker: ServiceProcess;
  let tenant: Tenant;

  before(async () => {
    [api, worker] = await Promise.all([startApi(WEBHOOK_TEST_ENV), startWorker(WEBHOOK_TEST_ENV)]);
    tenant = await createTenant(testDb());
  });
  after(() => Promise.all([api?.stop(), worker?.stop()]));

  const run = (script: string, args: string[] = []) =>
    new Promise<string>((resolve, reject) => {
      execFile(
        process.execPath,
        [`${examples}${script}`, ...args],
        { env: { ...process.env, WRS_BASE_URL: api.url, WRS_API_KEY: tenant.key }, timeout: 50000 },
        (error, stdout, stderr) =>
          error
            ? reject(new Error(`${script}: ${error.message}\n${stdout}${stderr}`))
            : resolve(stdout),
      );
    });

  it('run-a-workflow: creates a run, follows it on the stream and completes its steps', async () => {
    const out = await run('run-a-workflow.js');
    const runId = /created run (\S+)/.exec(out)?.[1];
    expect(runId, out).to.be.a('string');
    expect(out).to.match(/completed step "Personal details"/);
    expect(out).to.match(/completed step "Equipment"/);
    expect(out).to.match(/completed step "Manager approval"/);
    expect(out).to.include(`run ${runId} completed`);
    const row = await testDb()('workflow_runs').where({ id: runId }).first();
    expect(row.status).to.equal('completed');
  });

  it('list-runs: pages through a filtered list', async () => {
    const wrs = new WorkflowRunClient({ baseUrl: api.url, apiKey: tenant.key });
    for (let i = 0; i < 7; i++) {
      await wrs.createWorkflowRun({
        workflow_template_id: tenant.template.id,
        input_fields: { item: `thing ${i}`, amount: '1' },
        labels: { team: 'examples' },
      });
    }
    const out = await run('list-runs.js', ['team:examples']);
    expect(out).to.include('7 open runs labelled team:examples');
    expect(out.match(/^page \d:/gm)).to.have.length(3);
  });

  it('verify-webhooks: receives and verifies a delivery', async () => {
    const out = await run('verify-webhooks.js');
    expect(out).to.match(/verified run\.created for run \S+/);
  });
});
