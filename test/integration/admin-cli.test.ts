// The operators' CLI: one JSON object on stdout per command, a message and a non-zero exit on
// failure.
import { writeFile, mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { hashApiKey } from '../../src/auth/api-keys.js';
import { runAdmin } from '../support/processes.js';
import { testDb } from '../support/root-hooks.js';

describe('admin CLI', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'wrs-admin-'));
  });

  async function ok(args: string[]): Promise<Record<string, unknown>> {
    const res = await runAdmin(args);
    expect(res.code, res.stderr).to.equal(0);
    const lines = res.stdout.trim().split('\n');
    expect(lines).to.have.length(1);
    return JSON.parse(lines[0]!) as Record<string, unknown>;
  }

  it('creates an organization, a key, imports a template and revokes the key', async () => {
    const org = await ok(['create-org', '--name', 'Acme']);
    expect(org).to.include({ name: 'Acme' });
    const key = await ok(['create-api-key', '--org', org.id as string, '--name', 'ci']);
    expect(key.key).to.match(/^wrs_[A-Za-z0-9_-]{32}$/);
    const stored = await testDb()('api_keys').where({ id: key.id }).first();
    expect(stored.key_hash).to.equal(hashApiKey(key.key as string));

    const file = join(dir, 'template.json');
    await writeFile(
      file,
      JSON.stringify({
        name: 'Leave request',
        pages: [
          {
            name: 'Dates',
            dueInHours: 8,
            inputFields: [{ inputId: 'from', fieldName: 'From', required: true }],
          },
        ],
      }),
    );
    const template = await ok(['import-template', '--org', org.id as string, '--file', file]);
    expect(template).to.include({ name: 'Leave request' });
    expect(
      await testDb()('workflow_templates')
        .where({ id: template.id, organization_id: org.id })
        .first(),
    ).to.not.equal(undefined);

    const revoked = await ok(['revoke-api-key', '--id', key.id as string]);
    expect(revoked.id).to.equal(key.id);
    expect(new Date(revoked.revoked_at as string).getTime()).to.be.closeTo(Date.now(), 60000);
  });

  const failures: Array<[string, string[], RegExp]> = [
    ['an unknown command', ['frobnicate'], /unknown command/],
    ['a missing --name', ['create-org'], /--name is required/],
    ['an unknown organization', ['create-api-key', '--org', 'nope'], /organization nope not found/],
    ['an unknown key', ['revoke-api-key', '--id', 'nope'], /not found/],
    ['an unknown option', ['create-org', '--nme', 'x'], /nme/],
  ];
  for (const [what, args, message] of failures) {
    it(`fails with a message on stderr for ${what}`, async () => {
      const res = await runAdmin(args);
      expect(res.code).to.not.equal(0);
      expect(res.stdout).to.equal('');
      expect(res.stderr).to.match(message);
    });
  }

  it('refuses an invalid template file with a clear message and stores nothing', async () => {
    const org = await ok(['create-org', '--name', 'Templates']);
    const cases: Array<[unknown, RegExp]> = [
      [{ name: 'x', pages: [] }, /pages/],
      [{ name: 'x', pages: [{ name: 'A', inputFields: [{ inputId: 'a' }] }] }, /fieldName/],
      [
        {
          name: 'x',
          pages: [
            { name: 'A', inputFields: [] },
            { name: 'A', inputFields: [] },
          ],
        },
        /duplicate page name 'A'/,
      ],
      [
        {
          name: 'x',
          pages: [
            { name: 'A', inputFields: [{ inputId: 'a', fieldName: 'A' }] },
            { name: 'B', inputFields: [{ inputId: 'a', fieldName: 'B' }] },
          ],
        },
        /duplicate inputId 'a'/,
      ],
      [{ name: 'x', pages: [{ name: 'A', dueInHours: -1, inputFields: [] }] }, /dueInHours/],
    ];
    for (const [content, message] of cases) {
      const file = join(dir, 'bad.json');
      await writeFile(file, JSON.stringify(content));
      const res = await runAdmin(['import-template', '--org', org.id as string, '--file', file]);
      expect(res.code, JSON.stringify(content)).to.not.equal(0);
      expect(res.stderr).to.match(message);
    }
    await writeFile(join(dir, 'broken.json'), '{');
    expect(
      (
        await runAdmin([
          'import-template',
          '--org',
          org.id as string,
          '--file',
          join(dir, 'broken.json'),
        ])
      ).stderr,
    ).to.match(/not valid JSON/);
    expect(
      (
        await runAdmin([
          'import-template',
          '--org',
          org.id as string,
          '--file',
          join(dir, 'missing.json'),
        ])
      ).stderr,
    ).to.match(/cannot read/);
    expect(
      await testDb()('workflow_templates').where({ organization_id: org.id }).count({ n: '*' }),
    ).to.deep.equal([{ n: 0 }]);
  });

  it('sets up webhook endpoints for an organization, under the operator’s URL policy', async () => {
    const org = await ok(['create-org', '--name', 'Hooks']);
    const orgId = org.id as string;
    const made = await ok([
      'create-webhook-endpoint',
      '--org',
      orgId,
      '--url',
      'https://hooks.example.com/in',
      '--events',
      'run.completed,run.failed',
      '--description',
      'ops',
    ]);
    expect(made).to.include({
      url: 'https://hooks.example.com/in',
      enabled: true,
      description: 'ops',
    });
    expect(made.events).to.deep.equal(['run.completed', 'run.failed']);
    expect(made.secret).to.match(/^whsec_/);
    const listed = (await ok(['list-webhook-endpoints', '--org', orgId])) as unknown as Array<
      Record<string, unknown>
    >;
    expect(listed.map((e) => e.id)).to.deep.equal([made.id]);
    expect(listed[0]).not.to.have.property('secret');
    const rotated = await ok(['rotate-webhook-secret', '--org', orgId, '--id', made.id as string]);
    expect(rotated.secret)
      .to.match(/^whsec_/)
      .and.not.equal(made.secret);
    expect(
      await ok(['delete-webhook-endpoint', '--org', orgId, '--id', made.id as string]),
    ).to.deep.equal({
      id: made.id,
      deleted: true,
    });

    for (const args of [
      ['create-webhook-endpoint', '--org', orgId, '--url', 'http://hooks.example.com/in'],
      ['create-webhook-endpoint', '--org', orgId, '--url', 'https://10.0.0.1/in'],
      [
        'create-webhook-endpoint',
        '--org',
        orgId,
        '--url',
        'https://a.example/',
        '--events',
        'nope',
      ],
      ['delete-webhook-endpoint', '--org', orgId, '--id', made.id as string],
      ['list-webhook-endpoints', '--org', 'no-such-org'],
    ]) {
      const res = await runAdmin(args);
      expect(res.code, args.join(' ')).to.equal(2);
      expect(res.stderr).to.match(/^error: /);
    }
  });
});
