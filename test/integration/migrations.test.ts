// The migrations go down and up again, with data: every down step undoes its up on a database
// that holds rows, and the self-service migration turns what was there before it into what it
// holds now (each template its version 1, each key every scope), and back.
import { expect } from 'chai';
import { ALL_SCOPES } from '../../src/auth/scopes.js';
import { migrationSource } from '../../migrations/index.js';
import { testDb } from '../support/root-hooks.js';

const migrations = { migrationSource };

/** The name of the latest migration applied. */
async function applied(db: ReturnType<typeof testDb>): Promise<string> {
  const row = await db('knex_migrations').orderBy('id', 'desc').first('name');
  return row.name as string;
}

/** Rolls back, one migration at a time, until `name` is the latest applied. */
async function downTo(db: ReturnType<typeof testDb>, name: string): Promise<void> {
  while ((await applied(db)) !== name) await db.migrate.down(migrations);
}

describe('migrations', function () {
  this.timeout(60000);

  it('roll back and forward with data, the self-service migration carrying templates and keys', async () => {
    const db = testDb();
    const all = await migrationSource.getMigrations([]);
    expect(await applied(db)).to.equal(all.at(-1));
    // Every migration after self-service goes down on the way (each down step must work on a
    // database the migrations made), then self-service itself. On a database made by the
    // migrations alone, MariaDB has dropped the foreign key's own index on
    // api_keys.organization_id; its down step must cope with that.
    await downTo(db, '20261124000000_self_service');
    await db.migrate.down(migrations);
    await db('organizations').insert({ id: 'org-m', name: 'm', created_at: new Date() });
    await db('api_keys').insert({
      id: 'key-m',
      organization_id: 'org-m',
      name: 'old key',
      key_hash: 'f'.repeat(64),
      key_prefix: 'wrs_abcdef',
      created_at: new Date(),
    });
    const pages = [{ name: 'Only', inputFields: [{ inputId: 'a', fieldName: 'A' }] }];
    await db('workflow_templates').insert({
      id: 'tpl-m',
      organization_id: 'org-m',
      name: 'Before versions',
      pages: JSON.stringify(pages),
      created_at: new Date(),
    });

    await db.migrate.latest(migrations);
    expect(
      await db('workflow_template_versions').select('template_id', 'version', 'name', 'pages'),
    ).to.deep.equal([
      {
        template_id: 'tpl-m',
        version: 1,
        name: 'Before versions',
        pages: JSON.stringify(pages),
      },
    ]);
    expect(await db('workflow_templates').where({ id: 'tpl-m' }).first()).to.include({
      latest_version: 1,
    });
    const key = await db('api_keys').where({ id: 'key-m' }).first();
    expect(JSON.parse(key.scopes)).to.deep.equal(ALL_SCOPES);

    // And back: the template holds its latest version's name and pages again.
    await downTo(db, '20261124000000_self_service');
    await db.migrate.down(migrations);
    expect(
      await db('workflow_templates').where({ id: 'tpl-m' }).first('name', 'pages'),
    ).to.deep.equal({ name: 'Before versions', pages: JSON.stringify(pages) });
    await db.migrate.latest(migrations);
    expect(await db('workflow_template_versions').where({ template_id: 'tpl-m' })).to.have.length(
      1,
    );
  });

  it('roll the retention migration back and forward, with its columns and runs kept', async () => {
    const db = testDb();
    expect(await migrationSource.getMigrations([])).to.include('20261125020000_retention');
    await db.migrate.latest(migrations);
    await db('organizations').insert({ id: 'org-r', name: 'r', created_at: new Date() });
    await db('organizations').where({ id: 'org-r' }).update({ run_retention_days: 30 });
    // The later migrations first (the event stream's index goes, and comes back below).
    await downTo(db, '20261125020000_retention');
    expect(await eventStreamIndex(db)).to.equal(false);
    await db.migrate.down(migrations); // the retention migration alone
    expect(await db.schema.hasColumn('organizations', 'run_retention_days')).to.equal(false);
    expect(await db.schema.hasColumn('idempotency_keys', 'run_id')).to.equal(false);
    expect(await db('organizations').where({ id: 'org-r' }).first()).to.include({ name: 'r' });
    await db.migrate.latest(migrations);
    expect(await db.schema.hasColumn('organizations', 'run_retention_days')).to.equal(true);
    expect(await db.schema.hasColumn('idempotency_keys', 'run_id')).to.equal(true);
    expect(await eventStreamIndex(db)).to.equal(true);
  });
});

/** Whether run_events has the event stream's index, (organization_id, id). */
async function eventStreamIndex(db: ReturnType<typeof testDb>): Promise<boolean> {
  const [rows] = (await db.raw(
    "SHOW INDEX FROM run_events WHERE Key_name = 'run_events_org_id'",
  )) as [unknown[]];
  return rows.length > 0;
}
