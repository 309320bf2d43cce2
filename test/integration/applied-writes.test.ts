// What a worker writes when it applies runs' changes (RunStore.storeApplied), whatever the size
// of its batch (small batches go as a statement per run, large ones as one joined statement):
// each run's change is stored once, with its events, only if the run is still as the worker
// read it. A second worker applying the same changes, or a worker whose run was cancelled
// meanwhile, changes nothing and adds no events.
import { TEST_ACTOR } from '../support/actors.js';
import { expect } from 'chai';
import { createDb, type Db } from '../../src/db.js';
import { newId } from '../../src/lib/ids.js';
import {
  applyPending,
  cancelRun,
  newRun,
  requestStepCompletion,
} from '../../src/runs/run-state.js';
import type { RunRecord } from '../../src/runs/run-record.js';
import { fromRow } from '../../src/runs/run-columns.js';
import { RunStore } from '../../src/runs/run-store.js';
import { TemplateStore } from '../../src/templates/template-store.js';
import { testConfig } from '../support/env.js';
import { createTenant } from '../support/fixtures.js';
import { testDb } from '../support/root-hooks.js';

describe('applied changes as a worker stores them', () => {
  let workerDb: Db;
  let api: RunStore;
  let worker: RunStore;

  before(() => {
    // As the worker: several statements a query, the batch in one round trip.
    workerDb = createDb(testConfig(), undefined, { multipleStatements: true });
    const templates = new TemplateStore(testDb());
    api = new RunStore(testDb(), { templates });
    worker = new RunStore(workerDb, { oneTrip: true, templates });
  });

  after(() => workerDb.destroy());

  async function readAsWorker(ids: string[]): Promise<RunRecord[]> {
    const rows = await worker.findRowsByIds(ids);
    const pagesOf = await worker.templatesFor(rows);
    const byId = new Map(rows.map((row) => [row.id, fromRow(row, pagesOf)]));
    return ids.map((id) => byId.get(id)!);
  }

  for (const size of [1, 3, 40]) {
    it(`stores a batch of ${size} once, with its events, guarded by what the worker read`, async () => {
      const tenant = await createTenant(testDb());
      // Times of now: the started runs' due dates (24 h on) must lie ahead, or the reconciler
      // of a later test's worker, which shares the database, would find them past due.
      const created = new Date(Date.now() - 120_000);
      const runs = Array.from({ length: size }, () =>
        newRun(
          newId(),
          tenant.orgId,
          tenant.template,
          { item: "Laptop 'pro' \\ 15\"", amount: '1200' },
          { Request: 'alice', Approval: 'bob' },
          created,
          TEST_ACTOR,
        ),
      );
      await api.insertMany(runs);
      const ids = runs.map((run) => run.id);

      // Two workers read the same pending runs; then the last run is cancelled by a request.
      const seenByFirst = await readAsWorker(ids);
      const seenBySecond = await readAsWorker(ids);
      const cancelledId = ids[size - 1]!;
      const cancelled = cancelRun(
        seenByFirst[size - 1]!,
        'no longer needed',
        new Date(),
        TEST_ACTOR,
      );
      expect(await api.storeChange(seenByFirst[size - 1]!, cancelled)).to.equal(true);

      const firstAt = new Date(created.getTime() + 60_000);
      const applied = seenByFirst.map((run) => ({
        before: run,
        after: applyPending(run, firstAt),
      }));
      await worker.storeApplied(applied);
      const secondAt = new Date(created.getTime() + 120_000);
      await worker.storeApplied(
        seenBySecond.map((run) => ({ before: run, after: applyPending(run, secondAt) })),
      );

      for (const { after } of applied) {
        const stored = await api.findForOrganization(tenant.orgId, after.id);
        const history = await api.events(after.id);
        if (after.id === cancelledId) {
          expect(stored!.status).to.equal('cancelled');
          expect(history.map((e) => e.type)).to.deep.equal(['run.created', 'run.cancelled']);
          continue;
        }
        // The first worker's change, not the second's: its time, its step, its document.
        expect(stored!.status).to.equal('active');
        expect(stored!.currentStepName).to.equal('Request');
        expect(stored!.currentStepAssignee).to.equal('alice');
        expect(stored!.lastActivity.toISOString()).to.equal(firstAt.toISOString());
        expect(stored!.appliedSeq).to.equal(after.appliedSeq);
        expect(stored!.document).to.deep.equal(after.document);
        expect(history.map((e) => [e.seq, e.type, e.at])).to.deep.equal([
          [1, 'run.created', created.toISOString()],
          ...after.events.map((e) => [e.seq, e.type, firstAt.toISOString()]),
        ]);
      }
    });
  }

  for (const size of [1, 40]) {
    it(`adds no event of a completion (batch of ${size}) to a run cancelled after it was read`, async () => {
      const tenant = await createTenant(testDb(), {
        name: 'One step',
        pages: [{ name: 'Only', inputFields: [{ inputId: 'x', fieldName: 'X' }] }],
      });
      const runs = Array.from({ length: size }, () =>
        newRun(newId(), tenant.orgId, tenant.template, {}, {}, new Date(), TEST_ACTOR),
      );
      await api.insertMany(runs);
      const ids = runs.map((run) => run.id);
      const started = await readAsWorker(ids);
      await worker.storeApplied(
        started.map((run) => ({ before: run, after: applyPending(run, new Date()) })),
      );
      for (const run of await readAsWorker(ids)) {
        const next = requestStepCompletion(run, { x: '1' }, new Date(), TEST_ACTOR, 'Only');
        expect(await api.storeRequest(run, next)).to.equal(true);
      }

      // The worker reads the completions; then every other run is cancelled.
      const seen = await readAsWorker(ids);
      const cancelledIds = new Set(ids.filter((_, i) => i % 2 === 0));
      for (const run of seen.filter((r) => cancelledIds.has(r.id))) {
        expect(
          await api.storeChange(run, cancelRun(run, undefined, new Date(), TEST_ACTOR)),
        ).to.equal(true);
      }
      const applied = seen.map((run) => ({ before: run, after: applyPending(run, new Date()) }));
      // Completing the only step makes two events: the cancel took the first one's number.
      expect(applied[0]!.after.events.map((e) => e.type)).to.deep.equal([
        'step.completed',
        'run.completed',
      ]);
      await worker.storeApplied(applied);

      for (const id of ids) {
        const stored = await api.findForOrganization(tenant.orgId, id);
        const types = (await api.events(id)).map((e) => e.type);
        if (cancelledIds.has(id)) {
          expect(stored!.status).to.equal('cancelled');
          expect(types).to.deep.equal(['run.created', 'run.started', 'run.cancelled']);
        } else {
          expect(stored!.status).to.equal('completed');
          expect(types).to.deep.equal([
            'run.created',
            'run.started',
            'step.completed',
            'run.completed',
          ]);
        }
      }
    });
  }

  for (const size of [3, 40]) {
    it(`takes ids for a batch of ${size}'s events without leaving any unused (no gap for live streams to wait out)`, async () => {
      const tenant = await createTenant(testDb());
      const runs = Array.from({ length: size }, () =>
        newRun(newId(), tenant.orgId, tenant.template, {}, {}, new Date(), TEST_ACTOR),
      );
      await api.insertMany(runs);
      const ids = runs.map((run) => run.id);
      const read = await readAsWorker(ids);
      await worker.storeApplied(
        read.map((run) => ({ before: run, after: applyPending(run, new Date()) })),
      );
      // The next event written, by anyone, gets the id after the batch's last one: a stream
      // reading ids in order finds no hole it must wait out (src/streams/event-watermark.ts).
      const next = newRun(newId(), tenant.orgId, tenant.template, {}, {}, new Date(), TEST_ACTOR);
      await api.insertMany([next]);
      const rows = (await testDb()('run_events')
        .whereIn('run_id', [...ids, next.id])
        .where('seq', '>', 1)
        .orWhere((q) => q.where('run_id', next.id))
        .orderBy('id')
        .select('id', 'run_id')) as Array<{ id: number; run_id: string }>;
      expect(rows.at(-1)!.run_id, "the next run's event comes last").to.equal(next.id);
      const idList = rows.map((row) => Number(row.id));
      expect(idList).to.deep.equal(idList.map((_, i) => idList[0]! + i));
    });
  }
});
