// A schedule's times and what it owes, with a clock the test gives: cron in a time zone across
// both daylight-saving changes of Europe/Berlin in 2026, intervals, bounds, and the decisions of
// the overlap policies and the catch-up window.
import { expect } from 'chai';
import {
  cronProblem,
  isTimeZone,
  nextTimes,
  timesBetween,
  wallClock,
  type CadenceSpec,
} from '../../src/schedules/cadence.js';
import { decideFires, type DueSchedule } from '../../src/schedules/schedule-firing.js';

const BERLIN = 'Europe/Berlin';
const iso = (dates: Date[]) => dates.map((d) => d.toISOString());
const cron = (expression: string, extra: Partial<CadenceSpec> = {}): CadenceSpec => ({
  cadence: { cron: expression },
  timeZone: BERLIN,
  anchor: new Date('2026-01-01T00:00:00Z'),
  ...extra,
});

describe('schedules: cadence', () => {
  it('reads 5-field cron expressions only, and names the problem', () => {
    expect(cronProblem('30 9 * * 1-5')).to.equal(undefined);
    expect(cronProblem('0 0 * * * *')).to.match(/5 fields/);
    expect(cronProblem('@hourly')).to.match(/5 fields/);
    expect(cronProblem('61 * * * *')).to.match(/minute/);
    expect(isTimeZone('Europe/Berlin')).to.equal(true);
    expect(isTimeZone('Mars/Base')).to.equal(false);
  });

  it('fires every weekday at 09:00 Berlin time, in winter and summer time', () => {
    const times = nextTimes(cron('0 9 * * 1-5'), new Date('2026-03-27T00:00:00Z'), 3);
    // Friday 27 March (CET, UTC+1), then Monday 30 and Tuesday 31 (CEST, UTC+2).
    expect(iso(times)).to.deep.equal([
      '2026-03-27T08:00:00.000Z',
      '2026-03-30T07:00:00.000Z',
      '2026-03-31T07:00:00.000Z',
    ]);
  });

  it('fires a local time that does not exist (2026-03-29 02:30) at the next one that does (03:00)', () => {
    const daily = nextTimes(cron('30 2 * * *'), new Date('2026-03-28T12:00:00Z'), 2);
    expect(iso(daily)).to.deep.equal(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
    expect(wallClock(daily[0]!, BERLIN)).to.equal('2026-03-29 03:00');
    // Every half hour through the gap: 01:30, then 03:00 (02:00 and 02:30 do not exist).
    const halfHourly = nextTimes(cron('*/30 * * * *'), new Date('2026-03-29T00:10:00Z'), 3);
    expect(halfHourly.map((d) => wallClock(d, BERLIN))).to.deep.equal([
      '2026-03-29 01:30',
      '2026-03-29 03:00',
      '2026-03-29 03:30',
    ]);
  });

  it('fires a local time that occurs twice (2026-10-25 02:30) once, at its first occurrence', () => {
    const daily = nextTimes(cron('30 2 * * *'), new Date('2026-10-24T12:00:00Z'), 2);
    expect(iso(daily)).to.deep.equal(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    const hourly = nextTimes(cron('0 * * * *'), new Date('2026-10-24T23:30:00Z'), 4);
    // 02:00 comes twice (00:00 and 01:00 UTC): it fires once.
    expect(hourly.map((d) => wallClock(d, BERLIN))).to.deep.equal([
      '2026-10-25 02:00',
      '2026-10-25 03:00',
      '2026-10-25 04:00',
      '2026-10-25 05:00',
    ]);
    expect(hourly[1]!.getTime() - hourly[0]!.getTime()).to.equal(2 * 3600_000);
  });

  it('counts intervals from the anchor, within start_at and end_at', () => {
    const spec: CadenceSpec = {
      cadence: { intervalSeconds: 90 },
      timeZone: 'UTC',
      anchor: new Date('2026-05-01T00:00:00Z'),
      startAt: new Date('2026-05-01T00:00:00Z'),
      endAt: new Date('2026-05-01T00:04:00Z'),
    };
    expect(iso(nextTimes(spec, new Date('2026-04-01T00:00:00Z'), 10))).to.deep.equal([
      '2026-05-01T00:00:00.000Z',
      '2026-05-01T00:01:30.000Z',
      '2026-05-01T00:03:00.000Z',
    ]);
    const between = timesBetween(
      cron('0 * * * *', { timeZone: 'UTC' }),
      new Date('2026-05-01T00:00:00Z'),
      new Date('2026-05-01T05:00:00Z'),
      3,
    );
    expect(between).to.have.length(4); // the limit + 1: more than 3
  });
});

describe('schedules: what a schedule owes', () => {
  const at = (time: string) => new Date(`2026-05-01T${time}Z`);
  const every = (extra: Partial<DueSchedule> = {}): DueSchedule => ({
    spec: cron('*/5 * * * *', { timeZone: 'UTC' }),
    overlap: 'skip',
    catchupWindowMs: 3600_000,
    nextFireAt: at('10:00:00'),
    bufferedFor: null,
    lastRunOpen: false,
    ...extra,
  });

  it('fires a time that has come, and wakes at the next', () => {
    const d = decideFires(every(), at('10:00:00.050'));
    expect(d.fires.map((f) => f.scheduledFor.toISOString())).to.deep.equal([
      at('10:00:00').toISOString(),
    ]);
    expect(d.nextFireAt).to.deep.equal(at('10:05:00'));
    expect(d.wakeAt).to.deep.equal(at('10:05:00'));
    expect(decideFires(every(), at('09:59:59')).fires).to.deep.equal([]);
  });

  it('after downtime, fires the missed times inside the window in order and skips the older ones once', () => {
    const d = decideFires(
      every({ nextFireAt: at('07:00:00'), overlap: 'allow_all' }),
      at('10:12:00'),
    );
    // Window 09:12–10:12: 09:15 … 10:10 fire (12 times); 07:00 … 09:10 are one skip of 27.
    expect(d.fires).to.have.length(12);
    expect(d.fires[0]!.scheduledFor).to.deep.equal(at('09:15:00'));
    expect(d.fires.at(-1)!.scheduledFor).to.deep.equal(at('10:10:00'));
    expect(d.skips).to.deep.equal([
      { scheduledFor: at('07:00:00'), reason: 'catchup_window', missed: 27, until: at('09:10:00') },
    ]);
    expect(d.nextFireAt).to.deep.equal(at('10:15:00'));
  });

  it('skips, holds one, or allows every time while the previous run is open', () => {
    const base = { nextFireAt: at('10:00:00'), lastRunOpen: true };
    const now = at('10:11:00');
    const skip = decideFires(every({ ...base, overlap: 'skip' }), now);
    expect(skip.fires).to.deep.equal([]);
    expect(skip.skips.map((s) => s.reason)).to.deep.equal(['overlap', 'overlap', 'overlap']);
    const buffer = decideFires(every({ ...base, overlap: 'buffer_one' }), now);
    expect(buffer.bufferedFor).to.deep.equal(at('10:00:00'));
    expect(buffer.skips).to.have.length(2);
    expect(buffer.wakeAt!.getTime()).to.be.below(at('10:15:00').getTime());
    const all = decideFires(every({ ...base, overlap: 'allow_all' }), now);
    expect(all.fires).to.have.length(3);
    // The held time fires once the previous run has ended.
    const later = decideFires(
      every({ overlap: 'buffer_one', nextFireAt: at('10:15:00'), bufferedFor: at('10:00:00') }),
      at('10:12:00'),
    );
    expect(later.fires).to.deep.equal([
      { scheduledFor: at('10:00:00'), kind: 'cadence', held: true },
    ]);
    expect(later.bufferedFor).to.equal(null);
  });

  it('ends with its cadence: no next time past end_at', () => {
    const spec = cron('*/5 * * * *', { timeZone: 'UTC', endAt: at('10:05:00') });
    const d = decideFires(every({ spec, nextFireAt: at('10:05:00') }), at('10:06:00'));
    expect(d.fires).to.have.length(1);
    expect(d.nextFireAt).to.equal(null);
    expect(d.wakeAt).to.equal(null);
  });
});
