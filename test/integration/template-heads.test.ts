// New runs and the template heads an API process keeps: a save, an archive or a restore made
// through one API process is seen by the next create on another, which had the template's
// old head cached. The run's transaction checks what the run assumed of its template's head,
// so a stale head never stores a run of an old version or of an archived template.
import { expect } from 'chai';
import { createTenant, type Tenant } from '../support/fixtures.js';
import { Client } from '../support/http.js';
import { startApi, type ApiProcess } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

type Json = Record<string, unknown>;

/** A one-page definition whose page and field are named after the version they belong to. */
const pages = (version: number) => [
  { name: `Page v${version}`, inputFields: [{ inputId: `field${version}`, fieldName: 'F' }] },
];

describe('template heads across API processes', function () {
  this.timeout(120000);

  let one: ApiProcess;
  let two: ApiProcess;
  let tenant: Tenant;
  let clientOne: Client;
  let clientTwo: Client;

  before(async () => {
    [one, two] = await Promise.all([startApi(), startApi()]);
    tenant = await createTenant(testDb());
    clientOne = new Client(one.url, tenant.key);
    clientTwo = new Client(two.url, tenant.key);
  });

  after(() => Promise.all([one?.stop(), two?.stop()]));

  const create = (client: Client, extra: Json = {}) =>
    client.createRun({ workflow_template_id: tenant.template.id, input_fields: {}, ...extra });

  async function save(expectedVersion: number): Promise<void> {
    const res = await clientOne.call<Json>('/update-workflow-template', {
      id: tenant.template.id,
      expected_version: expectedVersion,
      pages: pages(expectedVersion + 1),
    });
    expect(res.status, res.text).to.equal(200);
  }

  const setArchived = async (archived: boolean) => {
    const path = archived ? '/archive-workflow-template' : '/restore-workflow-template';
    const res = await clientOne.call<Json>(path, { id: tenant.template.id });
    expect(res.status, res.text).to.equal(200);
  };

  const versionOf = (run: Json) => (run.run_json as { template: { version: number } }).template;

  it('a save on one process is used by the next create on another, every time', async () => {
    for (let version = 1; version <= 6; version++) {
      // Process two reads (and keeps) the head as it is now.
      const before = await create(clientTwo);
      expect(before.status, before.text).to.equal(200);
      expect(versionOf(before.body).version).to.equal(version);
      await save(version);
      // Saved and answered on process one: process two's next run is of the new version.
      const after = await create(clientTwo);
      expect(after.status, after.text).to.equal(200);
      expect(versionOf(after.body)).to.deep.include({ version: version + 1 });
      expect(versionOf(after.body)).to.deep.include({ pages: pages(version + 1) });
      const row = await testDb()('workflow_runs').where({ id: after.body.id }).first();
      expect(row.template_version).to.equal(version + 1);
    }
  });

  it('an archive on one process refuses the next create on another; a restore admits it', async () => {
    for (let round = 0; round < 3; round++) {
      expect((await create(clientTwo)).status).to.equal(200);
      const runs = await testDb()('workflow_runs').count({ n: '*' });
      await setArchived(true);
      const refused = await create(clientTwo);
      expect(refused.status, refused.text).to.equal(409);
      expect(refused.body.code).to.equal('template_archived');
      // A pinned version too: archived is archived.
      const pinned = await create(clientTwo, { workflow_template_version: 1 });
      expect(pinned.body.code).to.equal('template_archived');
      expect(await testDb()('workflow_runs').count({ n: '*' })).to.deep.equal(runs);
      await setArchived(false);
      // Process two last saw it archived: a refusal is decided on a fresh read, so it admits it.
      const admitted = await create(clientTwo);
      expect(admitted.status, admitted.text).to.equal(200);
    }
  });

  it('never stores a run of a version older than one saved before its create was sent', async () => {
    const latest = async () =>
      Number(
        (await testDb()('workflow_templates').where({ id: tenant.template.id }).first())
          .latest_version,
      );
    let saved = await latest();
    let stop = false;
    const saver = (async () => {
      while (!stop) {
        await save(saved);
        saved += 1;
      }
    })();
    const checked: Array<Promise<void>> = [];
    try {
      for (let i = 0; i < 60; i++) {
        const savedBefore = saved; // every save up to this one was answered before the create
        checked.push(
          create(i % 2 === 0 ? clientTwo : clientOne).then((res) => {
            expect(res.status, res.text).to.be.oneOf([200, 409]);
            if (res.status === 409) {
              expect(res.body.code).to.equal('template_changed_concurrently');
              return;
            }
            expect(versionOf(res.body).version).to.be.at.least(savedBefore);
          }),
        );
        if (i % 4 === 3) await Promise.all(checked.splice(0));
      }
      await Promise.all(checked);
    } finally {
      stop = true;
      await saver;
    }
  });
});
