// The delivery store's claim and record, against MariaDB: what a turn takes (the first owed of
// each run, with its history, held from other turns until its claim runs out) and what its
// record stores (only attempts of deliveries still in the round and at the attempt the turn
// claimed: one redelivered meanwhile keeps its new round, and no log row is written for it).
import { expect } from 'chai';
import { createDb, writeTransaction, type Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import type { TurnAttempt } from '../../src/webhooks/delivery-rows.js';
import { DeliveryStore, failOwedTo } from '../../src/webhooks/delivery-store.js';
import { disableEndpoint } from '../../src/webhooks/endpoint-store.js';
import { OutboxStore } from '../../src/webhooks/outbox-store.js';
import { testConfig } from '../support/env.js';
import { createTenant, insertEndpoint, insertRunEvents, type Tenant } from '../support/fixtures.js';
import { testDb } from '../support/root-hooks.js';
import { sleep } from '../support/wait.js';

describe('webhook deliveries in MySQL: a turn claims and records', () => {
  // The worker's pool: several statements a query, as the store needs.
  let db: Db;
  let tenant: Tenant;
  let store: DeliveryStore;
  let endpointId: string;

  before(async () => {
    db = createDb(testConfig(), undefined, { multipleStatements: true });
    tenant = await createTenant(testDb());
    store = new DeliveryStore(db, 10_000);
  });

  after(() => db.destroy());

  beforeEach(async () => {
    endpointId = await insertEndpoint(testDb(), tenant, 'https://hooks.example.com/store');
  });

  afterEach(async () => {
    await testDb()('webhook_endpoints').where({ id: endpointId }).delete();
  });

  /** Commits events for runs (each run's events seq 1, 2, …) and relays them. */
  async function owe(runs: Record<string, string[]>): Promise<void> {
    await insertRunEvents(testDb(), tenant, runs, 'Store');
    await new OutboxStore(db, 10_000).dispatch(1000, new Date());
  }

  function delivered(at: Date): TurnAttempt['record'] {
    return {
      at,
      statusCode: 200,
      latencyMs: 3,
      responseBody: 'ok',
      status: 'delivered',
      nextAttemptAt: null,
    };
  }

  it('takes the first owed delivery of each run, with its history, and holds it from other turns', async () => {
    const [a, b] = [newId(), newId()];
    await owe({ [a]: ['run.created', 'run.started'], [b]: ['run.created'] });
    const now = new Date(Date.now() + 1000);
    const until = new Date(now.getTime() + 60_000);

    const claimed = await store.claimTurn(endpointId, now, 10, until);
    expect(claimed.map((c) => [c.delivery.run_id, c.event.seq]).sort()).to.deep.equal(
      [
        [a, 1],
        [b, 1],
      ].sort(),
    );
    for (const c of claimed) {
      expect(c.history.map((h) => h.seq)).to.deep.equal([1]);
      expect(c.event.type).to.equal('run.created');
      expect(c.endpoint.id).to.equal(endpointId);
    }
    // Held: another turn finds nothing until the claim runs out.
    expect(await store.claimTurn(endpointId, now, 10, until)).to.deep.equal([]);
    const later = new Date(until.getTime() + 1);
    expect(
      await store.claimTurn(endpointId, later, 10, new Date(later.getTime() + 60_000)),
    ).to.have.length(2);
  });

  it('stores the attempts of a batch, except one whose delivery was redelivered meanwhile', async () => {
    const runs = [newId(), newId(), newId()];
    await owe(Object.fromEntries(runs.map((r) => [r, ['run.created', 'run.started']])));
    const now = new Date(Date.now() + 1000);
    const claimed = await store.claimTurn(endpointId, now, 10, new Date(now.getTime() + 60_000));
    expect(claimed).to.have.length(3);
    const moved = claimed[1]!.delivery;
    // A redelivery while the attempt was out: a new round, no attempts yet.
    await testDb()('webhook_deliveries')
      .where({ id: moved.id })
      .update({ round: Number(moved.round) + 1, attempts: 0 });

    const at = new Date(now.getTime() + 5);
    const record = await store.recordTurn(
      endpointId,
      claimed.map((c) => ({ delivery: c.delivery, record: delivered(at) })),
      at,
      new Date(0),
      { readNext: true },
    );
    expect(record.stored).to.deep.equal([true, false, true]);

    const rows = await testDb()('webhook_deliveries')
      .whereIn(
        'id',
        claimed.map((c) => c.delivery.id),
      )
      .select('id', 'status', 'round', 'attempts', 'locked_until', 'last_status_code');
    const byId = new Map(rows.map((r: { id: string }) => [r.id, r]));
    for (const [i, c] of claimed.entries()) {
      const row = byId.get(c.delivery.id) as Record<string, unknown>;
      if (i === 1) {
        expect(row).to.include({
          status: 'pending',
          round: 2,
          attempts: 0,
          last_status_code: null,
        });
      } else {
        expect(row).to.include({
          status: 'delivered',
          round: 1,
          attempts: 1,
          last_status_code: 200,
        });
        expect(row.locked_until).to.equal(null);
      }
    }
    const logged = await testDb()('webhook_attempts')
      .whereIn(
        'delivery_id',
        claimed.map((c) => c.delivery.id),
      )
      .select('delivery_id', 'round', 'status_code', 'response_body');
    expect(logged.map((l: { delivery_id: string }) => l.delivery_id).sort()).to.deep.equal(
      [claimed[0]!.delivery.id, claimed[2]!.delivery.id].sort(),
    );
    // The runs' next events are owed now, after the two delivered; the redelivered one is
    // still held by the claim that took it, until that runs out.
    expect(record.next).to.be.instanceOf(Date);
    const soon = new Date(now.getTime() + 10);
    const next = await store.claimTurn(endpointId, soon, 10, new Date(soon.getTime() + 60_000));
    expect(next.map((c) => [c.delivery.run_id, c.event.seq]).sort()).to.deep.equal(
      [
        [runs[0], 2],
        [runs[2], 2],
      ].sort(),
    );
    for (const c of next) {
      expect(c.history.map((h) => h.type)).to.deep.equal(['run.created', 'run.started']);
    }
  });

  it('makes no delivery for an endpoint a turn is disabling: the relay waits for the disable', async () => {
    const runId = newId();
    await insertRunEvents(testDb(), tenant, { [runId]: ['run.created'] }, 'Store');
    // A record that disables the endpoint (a 410), as recordTurn writes it: the endpoint, then
    // everything owed to it failed; the relay runs before that transaction commits.
    let relay: Promise<unknown> | undefined;
    await writeTransaction(db, 10_000, async (query) => {
      await disableEndpoint(query, endpointId, 'the receiver answered 410 Gone', new Date());
      await failOwedTo(query, endpointId, 'the receiver answered 410 Gone');
      relay = new OutboxStore(db, 10_000).dispatch(1000, new Date());
      relay.catch(() => undefined); // awaited below
      await sleep(300); // the relay reads the endpoints meanwhile
    });
    await relay;
    // Nothing is left owed to the disabled endpoint: a delivery made for it would stay pending,
    // never sent, in its log.
    const owed = await testDb()('webhook_deliveries').where({ endpoint_id: endpointId });
    expect(owed.filter((d: { status: string }) => d.status === 'pending')).to.deep.equal([]);
    const event = await testDb()('run_events').where({ run_id: runId }).first('dispatched');
    expect(Number(event?.dispatched)).to.equal(1);
  });
});
