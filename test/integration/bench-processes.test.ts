import { expect } from 'chai';
import { mkdirSync, rmSync } from 'node:fs';
import { startScript } from '../../bench/processes.js';
import { LOG_DIR } from '../../bench/settings.js';

// The bench times a worker from its "started" line: a worker started again under the same
// name (the next round's, the next drain's) appends to the same log file, and must not be
// taken as started by the line its predecessor wrote.
describe('bench: a process started again under the same name', () => {
  before(() => mkdirSync(LOG_DIR, { recursive: true }));
  after(() => rmSync(LOG_DIR, { recursive: true, force: true }));

  it('waits for its own log line, not the one an earlier process of that name wrote', async () => {
    const first = startScript('same-name', 'test/support/log-line.js', { args: ['ready'] });
    await first.waitForLog(/"msg":"ready"/, 10_000);
    await first.stop();

    const second = startScript('same-name', 'test/support/log-line.js', {
      args: ['ready', '1500'],
    });
    try {
      const began = Date.now();
      await second.waitForLog(/"msg":"ready"/, 10_000);
      // Its own line comes 1.5 s after it starts; the earlier one was in the file already.
      expect(Date.now() - began).to.be.at.least(1400);
      expect(second.log().match(/"msg":"ready"/g)).to.have.length(1);
      expect(await second.countInLog('"msg":"ready"')).to.equal(1);
    } finally {
      await second.stop();
    }
  });
});
