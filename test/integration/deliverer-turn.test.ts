// An endpoint's turn, in this process, against MariaDB, Redis and a receiver: deliveries its
// process dispatches while the turn sends are taken by that same turn after the batch it is
// sending, instead of waiting for the turn to end and BullMQ to start the next one.
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createDb, type Db } from '../../src/db.js';
import { ProcessQueues } from '../../src/jobs/process-queues.js';
import { newId } from '../../src/lib/ids.js';
import { createLogger } from '../../src/logger.js';
import { RedisConnections } from '../../src/queue.js';
import { Deliverer } from '../../src/webhooks/deliverer.js';
import { DeliveryStore } from '../../src/webhooks/delivery-store.js';
import { OutboxStore } from '../../src/webhooks/outbox-store.js';
import { testConfig } from '../support/env.js';
import { createTenant, insertEndpoint, insertRunEvents, type Tenant } from '../support/fixtures.js';
import { testDb } from '../support/root-hooks.js';
import { waitFor } from '../support/wait.js';

/** A receiver that answers 200, each answer held until the test lets it go. */
class HeldReceiver {
  /** The runs whose deliveries arrived, in order. */
  readonly runs: string[] = [];
  private held: ServerResponse[] = [];
  private server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        data: { runId: string };
      };
      this.runs.push(body.data.runId);
      this.held.push(res);
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  release(): void {
    for (const res of this.held.splice(0)) res.writeHead(200).end('ok');
  }

  close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('an endpoint turn in its process', () => {
  let db: Db;
  let tenant: Tenant;
  let connections: RedisConnections;
  let queues: ProcessQueues;
  let deliverer: Deliverer;
  let outbox: OutboxStore;
  let receiver: HeldReceiver;
  let endpointId: string;

  before(async () => {
    const config = testConfig({ WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOW_PRIVATE: 'true' });
    const quiet = createLogger(
      'error',
      {},
      new Writable({ write: (_chunk, _encoding, done) => done() }),
    );
    // The worker's pool: several statements a query, as the stores need.
    db = createDb(config, quiet, { multipleStatements: true });
    tenant = await createTenant(testDb());
    connections = new RedisConnections(config);
    queues = new ProcessQueues(connections, config, quiet, 'wrs-test');
    outbox = new OutboxStore(db, 10_000);
    deliverer = new Deliverer(
      new DeliveryStore(db, 10_000),
      {
        summary: () => {
          throw new Error('every delivery here carries the history it needs');
        },
      },
      queues.get('webhookDelivery'),
      config.webhooks,
      quiet,
    );
  });

  after(async () => {
    await queues.close();
    await db.destroy();
  });

  beforeEach(async () => {
    receiver = new HeldReceiver();
    const url = await receiver.listen();
    endpointId = await insertEndpoint(testDb(), tenant, url);
  });

  afterEach(async () => {
    await receiver.close();
    await testDb()('webhook_endpoints').where({ id: endpointId }).delete();
  });

  /** Commits a run's first event and relays it: one delivery owed to the endpoint. */
  async function owe(runId: string): Promise<void> {
    await insertRunEvents(testDb(), tenant, { [runId]: ['run.created'] }, 'Turn');
    const pass = await outbox.dispatch(1000, new Date());
    expect(pass.endpoints).to.deep.equal([endpointId]);
  }

  /**
   * A turn sending the delivery of run A, held at the receiver while run B's is dispatched;
   * `told`: the worker's dispatcher tells its deliverer, as workers/main.ts wires them.
   */
  async function turnWhileDispatched(told: boolean) {
    const [a, b] = [newId(), newId()];
    await owe(a);
    const turn = deliverer.turn(endpointId);
    await waitFor('the first delivery to arrive', () => receiver.runs.length === 1);
    await owe(b);
    if (told) deliverer.dispatched([endpointId]);
    receiver.release();
    // B's attempt, when the turn takes it, is held too until it is let go.
    const released = setInterval(() => receiver.release(), 20);
    try {
      return { summary: await turn, runs: [...receiver.runs], a, b };
    } finally {
      clearInterval(released);
    }
  }

  it('takes the deliveries its process dispatched while it sent, after the batch it was sending', async () => {
    const { summary, runs, a, b } = await turnWhileDispatched(true);
    expect(summary.attempted).to.equal(2);
    expect(summary.outcomes).to.deep.equal({ delivered: 2 });
    expect(runs).to.deep.equal([a, b]);
    const owed = await testDb()('webhook_deliveries')
      .where({ endpoint_id: endpointId })
      .select('status');
    expect(owed.map((d: { status: string }) => d.status)).to.deep.equal(['delivered', 'delivered']);
  });

  it('ends after its batch when nothing was dispatched for it meanwhile (the next turn takes the rest)', async () => {
    const { summary, runs, a } = await turnWhileDispatched(false);
    expect(summary.attempted).to.equal(1);
    expect(runs).to.deep.equal([a]);
  });
});
