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
});
