// A worker says when it takes jobs ("worker ready": its BullMQ connections up with their
// scripts, MySQL answering), not only that its process started: an operator (and the bench,
// which times a drain from it) can tell a worker that is back from one still connecting.
import { expect } from 'chai';
import { testEnv } from '../support/env.js';
import { startWorker, type ServiceProcess } from '../support/processes.js';
import { TcpProxy } from '../support/tcp-proxy.js';
import { sleep } from '../support/wait.js';

describe('worker: ready once it can take jobs', function () {
  this.timeout(60000);

  let mysql: TcpProxy;
  let worker: ServiceProcess | undefined;

  before(async () => {
    const db = new URL(testEnv.DATABASE_URL!);
    mysql = await TcpProxy.start({ host: db.hostname, port: Number(db.port || 3306) });
  });

  afterEach(async () => {
    mysql.resume();
    await worker?.stop();
    worker = undefined;
  });

  after(() => mysql?.close());

  it('logs "worker ready" after "worker started", with the ms since its start', async () => {
    worker = await startWorker({ DATABASE_URL: mysql.urlFor(testEnv.DATABASE_URL!) });
    await worker.waitForLine(/"msg":"worker ready"/);
    const started = worker.lines.findIndex((l) => l.includes('"msg":"worker started"'));
    const ready = worker.lines.findIndex((l) => l.includes('"msg":"worker ready"'));
    expect(started).to.be.at.least(0);
    expect(ready).to.be.greaterThan(started);
    const { ms } = JSON.parse(worker.lines[ready]!) as { ms: number };
    expect(ms).to.be.a('number').and.greaterThan(0);
  });

  it('is not ready while MySQL is away, and is once it is back', async () => {
    mysql.pause();
    worker = await startWorker({ DATABASE_URL: mysql.urlFor(testEnv.DATABASE_URL!) });
    await sleep(2000); // BullMQ's connections are up by now; MySQL refuses every connection
    expect(worker.lines.some((l) => l.includes('"msg":"worker ready"'))).to.equal(false);
    mysql.resume();
    await worker.waitForLine(/"msg":"worker ready"/, 10000);
  });
});
