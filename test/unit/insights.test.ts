// The insights' pure parts: the DDSketch bins (quantiles within 1% of the exact ones, merging
// exact, the stored text read back the same) and the buckets of the organization's clock (days
// of 23 and 25 hours, weeks from Monday, a zone half an hour off UTC).
import { expect } from 'chai';
import fc from 'fast-check';
import {
  addDuration,
  binsText,
  emptyBins,
  mergeBins,
  parseBins,
  quantiles,
} from '../../src/insights/duration-sketch.js';
import { bucketBounds, bucketStart, dayStart } from '../../src/insights/insight-buckets.js';
import {
  byDay,
  foldEvents,
  slotOf,
  type FoldEvent,
  type FoldResult,
  type FoldRun,
} from '../../src/insights/insight-fold.js';

const exact = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(q * (values.length - 1))]!;
const iso = (ms: number) => new Date(ms).toISOString();

describe('insights: duration sketch', () => {
  it('gives each quantile within 1% of the exact one, and merges split bins into the same bins', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 400 * 86_400_000 }), { minLength: 1, maxLength: 400 }),
        fc.nat(),
        (values, cut) => {
          const all = emptyBins();
          for (const v of values) addDuration(all, v);
          const [p50, p90, p0, p100] = quantiles(all, [0.5, 0.9, 0, 1]);
          for (const [q, got] of [
            [0.5, p50],
            [0.9, p90],
            [0, p0],
            [1, p100],
          ] as const) {
            const want = exact(values, q);
            expect(Math.abs(got! - want), `q${q}: ${got} vs ${want}`).to.be.at.most(want * 0.01);
          }
          // Two halves merged (through their stored text) are the whole, bin for bin.
          const at = cut % (values.length + 1);
          const left = emptyBins();
          const right = emptyBins();
          values.slice(0, at).forEach((v) => addDuration(left, v));
          values.slice(at).forEach((v) => addDuration(right, v));
          const merged = parseBins(binsText(left));
          mergeBins(merged, parseBins(binsText(right)));
          expect(quantiles(merged, [0.5, 0.9])).to.deep.equal([p50, p90]);
          expect(merged.zero).to.equal(all.zero);
          // The counts from the first bin in use to the last, with its key.
          const trimmed = (b: typeof all) => {
            const used = b.counts.map((c, k) => (c > 0 ? k : -1)).filter((k) => k >= 0);
            if (used.length === 0) return [];
            const [first, last] = [used[0]!, used[used.length - 1]!];
            return [b.offset + first, ...b.counts.slice(first, last + 1)];
          };
          expect(trimmed(merged)).to.deep.equal(trimmed(all));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('answers null for no values', () => {
    expect(quantiles(emptyBins(), [0.5])).to.deep.equal([null]);
  });
});

describe('insights: buckets of the organization’s clock', () => {
  it('makes the day summer time ends 25 hours and the day it starts 23, in Europe/Berlin', () => {
    const days = bucketBounds(
      Date.parse('2026-10-24T12:00:00Z'),
      Date.parse('2026-10-26T12:00:00Z'),
      'day',
      'Europe/Berlin',
      10,
    )!.map(iso);
    expect(days).to.deep.equal([
      '2026-10-23T22:00:00.000Z',
      '2026-10-24T22:00:00.000Z',
      '2026-10-25T23:00:00.000Z',
      '2026-10-26T23:00:00.000Z',
    ]);
    const spring = bucketBounds(
      Date.parse('2026-03-29T00:30:00Z'),
      Date.parse('2026-03-29T21:00:00Z'),
      'hour',
      'Europe/Berlin',
      100,
    )!;
    expect(bucketStart(Date.parse('2026-03-29T12:00:00Z'), 'day', 'Europe/Berlin')).to.equal(
      Date.parse('2026-03-28T23:00:00Z'),
    );
    expect(
      bucketBounds(
        Date.parse('2026-03-29T00:00:00Z'),
        Date.parse('2026-03-29T21:00:00Z'),
        'day',
        'Europe/Berlin',
        10,
      )!.map(iso),
    ).to.deep.equal(['2026-03-28T23:00:00.000Z', '2026-03-29T22:00:00.000Z']);
    // 00:00 to 21:00 UTC: 21 hours, though the clock reads 01:00 to 23:00 (02:00 never came).
    expect(spring.length - 1).to.equal(21);
  });

  it('starts weeks on Monday, local midnight', () => {
    // Wednesday 2026-11-25 in New York: the week began Monday the 23rd, 05:00 UTC.
    expect(
      iso(bucketStart(Date.parse('2026-11-25T15:00:00Z'), 'week', 'America/New_York')),
    ).to.equal('2026-11-23T05:00:00.000Z');
  });

  it('keeps hours of a zone half an hour off UTC on its own clock, slots included', () => {
    const at = Date.parse('2026-11-27T10:10:00Z'); // 15:40 in Kolkata
    expect(iso(bucketStart(at, 'hour', 'Asia/Kolkata'))).to.equal('2026-11-27T09:30:00.000Z');
    expect(iso(slotOf(at, 'Asia/Kolkata'))).to.equal('2026-11-27T09:30:00.000Z');
    expect(iso(bucketStart(at, 'day', 'Asia/Kolkata'))).to.equal('2026-11-26T18:30:00.000Z');
  });

  it('sums the hours of a day of the zone’s clock into its daily slot, the 25 hours of the day summer time ends included', () => {
    // A run created and one completed each hour from 2026-10-24 22:00 to 10-26 22:00 UTC, in
    // Europe/Berlin: the 25th (25 hours) and the 26th, as local days; the 24th's last 2 hours.
    const events: FoldEvent[] = [];
    let id = 0;
    const hours = 49;
    for (let h = 0; h < hours; h++) {
      const at = Date.parse('2026-10-24T20:30:00Z') + h * 3_600_000;
      const run = `r${h}`;
      events.push(
        {
          id: ++id,
          runId: run,
          organizationId: 'o',
          type: 'run.created',
          at,
          data: { templateId: 't' },
        },
        {
          id: ++id,
          runId: run,
          organizationId: 'o',
          type: 'run.completed',
          at: at + 60_000 * (h + 1),
          data: {},
        },
      );
    }
    const zone = () => 'Europe/Berlin';
    const result = foldEvents(events, new Map(), zone, () => ({ labels: [] }));
    const days = [...result.runDays.values()].map(({ key, delta }) => ({
      day: iso(key.slot!),
      zone: key.zone,
      created: delta.created,
      completed: delta.completed,
      durations: delta.durationCount,
    }));
    expect(days).to.deep.equal([
      {
        day: '2026-10-23T22:00:00.000Z',
        zone: 'Europe/Berlin',
        created: 2,
        completed: 2,
        durations: 2,
      },
      {
        day: '2026-10-24T22:00:00.000Z',
        zone: 'Europe/Berlin',
        created: 25,
        completed: 25,
        durations: 25,
      },
      {
        day: '2026-10-25T23:00:00.000Z',
        zone: 'Europe/Berlin',
        created: 22,
        completed: 22,
        durations: 22,
      },
    ]);
    // The day's durations are its hours' merged: the same quantiles and maximum.
    const summer = [...result.runSlots.values()].filter(
      ({ key }) => dayStart(key.slot!, 'Europe/Berlin') === Date.parse('2026-10-24T22:00:00Z'),
    );
    expect(summer).to.have.length(25);
    const merged = emptyBins();
    for (const { delta } of summer) mergeBins(merged, delta.durations);
    const day = [...result.runDays.values()][1]!.delta;
    expect(day.durations).to.deep.equal(merged);
    expect(day.durationMax).to.equal(Math.max(...summer.map(({ delta }) => delta.durationMax)));
    // byDay of the hourly slots in another zone: that zone's days.
    const utc = [...byDay(result.runSlots, () => 'UTC').values()].map(({ key }) => iso(key.slot!));
    expect(utc).to.deep.equal([
      '2026-10-24T00:00:00.000Z',
      '2026-10-25T00:00:00.000Z',
      '2026-10-26T00:00:00.000Z',
    ]);
  });

  it('refuses more buckets than allowed', () => {
    expect(bucketBounds(0, 1000 * 3_600_000, 'hour', 'UTC', 500)).to.equal(undefined);
    expect(bucketBounds(0, 500 * 3_600_000, 'hour', 'UTC', 500)).to.have.length(501);
  });
});

describe('insights: the fold of each kind of event', () => {
  const T0 = Date.parse('2026-11-02T09:00:00Z');
  const min = 60_000;
  let id = 0;
  const event = (
    runId: string,
    type: FoldEvent['type'],
    atMin: number,
    data: Record<string, unknown> = {},
  ): FoldEvent => ({ id: ++id, runId, organizationId: 'o', type, at: T0 + atMin * min, data });
  const fold = (events: FoldEvent[], runs = new Map<string, FoldRun>()) => {
    const result = foldEvents(
      events,
      runs,
      () => 'UTC',
      () => ({ labels: ['l:team:red'] }),
    );
    return { result, runs };
  };
  /** Open runs by version and step, for the slice of every run. */
  const open = (result: FoldResult) =>
    Object.fromEntries(
      [...result.open.values()]
        .filter(({ key, delta }) => key.slice === '' && (delta.runs !== 0 || delta.overdue !== 0))
        .map(({ key, delta }) => [`v${key.version}:${key.step}`, [delta.runs, delta.overdue]]),
    );
  const steps = (result: FoldResult, slice = '') =>
    Object.fromEntries(
      [...result.stepSlots.values()]
        .filter(({ key }) => key.slice === slice)
        .map(({ key, delta }) => [
          key.step,
          [delta.done, delta.late, delta.rejected, delta.skipped, delta.reopened],
        ]),
    );
  const created = (runId: string) =>
    event(runId, 'run.created', 0, { templateId: 't', templateVersion: 1, workflowName: 'w' });

  it('sends a rejected run back: the approval rejected, the pages reopened, the run open at the page it went back to', () => {
    const { result } = fold([
      created('r'),
      event('r', 'run.started', 1, { step: 'Submit', assignee: 'ann' }),
      event('r', 'step.completed', 11, {
        step: 'Submit',
        nextStep: 'Approve',
        nextAssignee: 'mia',
        nextDueDate: new Date(T0 + 20 * min).toISOString(),
      }),
      event('r', 'step.skipped', 11, { step: 'Extra', rule: 0, reason: 'hidden' }),
      event('r', 'step.rejected', 31, {
        step: 'Approve',
        outcome: 'reopened',
        nextStep: 'Submit',
        nextAssignee: 'ann',
      }),
      event('r', 'step.reopened', 31, {
        step: 'Submit',
        from: 'Approve',
        steps: ['Submit', 'Approve'],
      }),
    ]);
    // [done, late, rejected, skipped, reopened]
    expect(steps(result)).to.deep.equal({
      Submit: [1, 0, 0, 0, 1],
      Extra: [0, 0, 0, 1, 0],
      Approve: [0, 0, 1, 0, 1],
    });
    expect(open(result)).to.deep.equal({ 'v1:Submit': [1, 0] });
    // The assignee's slice holds the steps they held when they ended.
    expect(steps(result, 'a:mia')).to.deep.equal({ Approve: [0, 0, 1, 0, 0] });
    expect(steps(result, 'l:team:red')).to.deep.equal(steps(result));
  });

  it('counts a step done after its due date late, and an overdue step among the overdue until it moves', () => {
    const due = new Date(T0 + 5 * min).toISOString();
    const { result, runs } = fold([
      created('r'),
      event('r', 'run.started', 1, { step: 'A', dueDate: due }),
      event('r', 'step.overdue', 5, { step: 'A', dueDate: due }),
    ]);
    expect(open(result)).to.deep.equal({ 'v1:A': [1, 1] });
    const later = fold(
      [event('r', 'step.completed', 9, { step: 'A', nextStep: 'B' })],
      runs,
    ).result;
    expect(open(later)).to.deep.equal({ 'v1:A': [-1, -1], 'v1:B': [1, 0] });
    expect(steps(later)).to.deep.equal({ A: [1, 1, 0, 0, 0] });
    const active = [...later.stepSlots.values()].find(({ key }) => key.slice === '')!.delta;
    expect([active.durationCount, active.durationMax]).to.deep.equal([1, 8 * min]);
  });

  it('takes a failed run out of the open runs and puts it back at its step on a retry', () => {
    const { result, runs } = fold([
      created('r'),
      event('r', 'run.started', 1, { step: 'A' }),
      event('r', 'run.failed', 2, { error: 'x', step: 'A' }),
    ]);
    expect(open(result)).to.deep.equal({});
    const retried = fold(
      [event('r', 'run.retried', 3, { change: 'completeStep', step: 'A' })],
      runs,
    ).result;
    expect(open(retried)).to.deep.equal({ 'v1:A': [1, 0] });
  });

  it('moves a migrated run to its new version and step, overdue only if its new due time has passed', () => {
    const { runs } = fold([
      created('r'),
      event('r', 'run.started', 1, {
        step: 'Review',
        dueDate: new Date(T0 + 2 * min).toISOString(),
      }),
      event('r', 'step.overdue', 2, {
        step: 'Review',
        dueDate: new Date(T0 + 2 * min).toISOString(),
      }),
    ]);
    const moved = fold(
      [
        event('r', 'run.migrated', 3, {
          fromVersion: 1,
          toVersion: 2,
          workflowName: 'w',
          pageMap: { Review: 'Manager review' },
          step: 'Manager review',
          dueDate: new Date(T0 + 60 * min).toISOString(),
        }),
      ],
      runs,
    ).result;
    expect(open(moved)).to.deep.equal({ 'v1:Review': [-1, -1], 'v2:Manager review': [1, 0] });
  });

  it('moves an open step between assignees on a claim, and forgets a deleted run', () => {
    const { result, runs } = fold([
      created('r'),
      event('r', 'run.started', 1, { step: 'A' }),
      event('r', 'step.assigned', 2, { step: 'A', change: 'claim', assignee: 'fay' }),
    ]);
    const fay = [...result.open.values()].find(({ key }) => key.slice === 'a:fay')!.delta;
    expect(fay).to.deep.equal({ runs: 1, overdue: 0 });
    const gone = fold(
      [event('r', 'run.deleted', 3, { workflowName: 'w', status: 'active' })],
      runs,
    );
    expect(open(gone.result)).to.deep.equal({ 'v1:A': [-1, 0] });
    expect([...gone.result.gone]).to.deep.equal(['r']);
    expect(gone.runs.has('r')).to.equal(false);
  });

  it('counts nothing of a run it never saw created, nor of a run.created without a template', () => {
    const { result } = fold([
      event('x', 'run.started', 1, { step: 'A' }),
      event('y', 'run.created', 1, { workflowName: 'w' }),
    ]);
    expect(result.runSlots.size + result.open.size + result.changed.size).to.equal(0);
  });
});
