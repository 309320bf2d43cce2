import { expect } from 'chai';
import { mkdirSync, rmSync } from 'node:fs';
import { createTenant } from '../../bench/fixtures.js';
import { measureRules } from '../../bench/phases/rules.js';
import { SKIPPED_PAGES, VISIBLE_PAGES } from '../../bench/rules-templates.js';
import { LOG_DIR } from '../../bench/settings.js';
import { testDb } from '../support/root-hooks.js';
import { testEnv } from '../support/env.js';

// The rules phase compares templates with and without rules; its figures mean something only
// if every create was stored with its values, the runs the API created started, and each
// drain's steps went as designed: A's runs pass over pages 3, 5 and 8, are assigned and given
// due times by its rules, B's and C's pass over nothing. Not timing: a tiny run of the phase.
describe('bench: the rules phase', function () {
  this.timeout(180_000);
  before(() => mkdirSync(LOG_DIR, { recursive: true }));
  after(() => rmSync(LOG_DIR, { recursive: true, force: true }));

  it('creates, starts and applies steps of each template as designed', async () => {
    const db = testDb();
    const tenant = await createTenant(db, 'rules');
    const lines: string[] = [];
    const copies = 2;
    const result = await measureRules({
      db,
      tenant,
      env: { ...testEnv },
      apiPrefix: testEnv.QUEUE_PREFIX!,
      workerPrefix: `${testEnv.QUEUE_PREFIX}-rules`,
      sizes: {
        connections: 2,
        warmupSeconds: 1,
        createSeconds: 1,
        createRounds: 1,
        checkSeconds: 1,
        drainRuns: copies * VISIBLE_PAGES.length,
        drainRounds: 1,
        warmupRuns: 0,
      },
      log: (line) => lines.push(line),
    });

    expect(result.checks.problems, lines.join('\n')).to.deep.equal([]);
    expect([result.fields, result.pages, result.rules]).to.deep.equal([200, 10, 50]);
    for (const key of ['A', 'B', 'C'] as const) {
      expect(result.checks.created[key], `${key} created`).to.be.above(0);
      expect(result.checks.started[key], `${key} started`).to.be.above(0);
      expect(result.checks.applied[key], `${key} applied`).to.equal(copies * VISIBLE_PAGES.length);
    }
    // Each of A's skipped pages is passed over by the completion of the step before it.
    expect(result.checks.skipped).to.deep.equal({ A: copies * SKIPPED_PAGES.length, B: 0, C: 0 });
    const drainOf = (key: 'A' | 'B' | 'C') => result.drains.find((d) => d.template === key)!;
    // Every completion but the last step's enters a page: A's rules assign it and set its due
    // time; B's and C's pages fall due by their own dueInHours, assigned to no one.
    const entered = copies * (VISIBLE_PAGES.length - 1);
    expect([drainOf('A').assigned, drainOf('A').due]).to.deep.equal([entered, entered]);
    expect([drainOf('B').assigned, drainOf('B').due]).to.deep.equal([0, entered]);
    expect([drainOf('C').assigned, drainOf('C').due]).to.deep.equal([0, entered]);
    // The statements each process sent were counted (the query counter loaded into both).
    for (const round of result.creates) expect(round.shapes).to.not.deep.equal({});
    for (const drain of result.drains) expect(drain.selectsPerStep).to.be.above(0);
    // And the tables are left empty for what follows.
    const [[left]] = (await db.raw('SELECT COUNT(*) AS n FROM workflow_runs')) as [[{ n: number }]];
    expect(Number(left.n)).to.equal(0);
  });
});
