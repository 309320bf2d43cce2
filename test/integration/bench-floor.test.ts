import { expect } from 'chai';
import { createTenant } from '../../bench/fixtures.js';
import { measureWriteFloor } from '../../bench/phases/write-floor.js';
import { createDb } from '../../src/db.js';
import { testDb } from '../support/root-hooks.js';
import { testConfig } from '../support/env.js';

// The write floor sets the steady state's MariaDB cost per run beside the same runs written by
// the service's own code in batches of given sizes. Its figure means something only if every
// run was created and started, in transactions of those sizes.
describe('bench: the write floor', () => {
  it('creates and starts every run, a transaction per batch of the sizes asked for', async () => {
    const db = testDb();
    const pool = createDb(testConfig(), undefined, { multipleStatements: true });
    const tenant = await createTenant(db, 'floor');
    const lines: string[] = [];
    try {
      const result = await measureWriteFloor({
        db,
        pool,
        tenant,
        runsPerSize: 62,
        sizes: [
          [3, 5],
          [20, 20],
        ],
        log: (line) => lines.push(line),
      });
      expect(result.rows.map((r) => [r.creates, r.starts, r.runs])).to.deep.equal([
        [3, 5, 62],
        [20, 20, 62],
      ]);
      // Com_commit is the server's: at least a commit per batch of creates and per batch of
      // starts, the last of each smaller (21 + 13 for 62 runs; 4 + 4), more when anything else
      // commits meanwhile.
      expect(result.rows[0]!.commitsPerRun).to.be.at.least(34 / 62 - 0.001);
      expect(result.rows[1]!.commitsPerRun).to.be.at.least(8 / 62 - 0.001);
      expect(result.rows[1]!.commitsPerRun).to.be.below(result.rows[0]!.commitsPerRun);
      const figures = [...result.rows.map((row) => row.mariadbUsPerRun), result.selectOneUs];
      expect(figures.every(Number.isFinite), String(figures)).to.equal(true);
      expect(lines).to.have.length(3);
    } finally {
      await pool.destroy();
    }
  });
});
