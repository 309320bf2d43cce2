// Due times in a time zone (src/templates/definition/due-dates.ts): each unit, weekends,
// negative amounts, the daylight-saving changes of 2026 in Europe/Berlin (29 March) and
// America/New_York (8 March, 1 November), date anchors at the end of their day; then
// properties of business days over random anchors.
import { expect } from 'chai';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import type { DueUnit } from '../../src/templates/definition/definition-types.js';
import {
  addDue,
  isTimeZone,
  type DueAnchorValue,
} from '../../src/templates/definition/due-dates.js';

const BERLIN = 'Europe/Berlin';
const NEW_YORK = 'America/New_York';

const at = (iso: string): DueAnchorValue => ({ instant: new Date(iso) });
/** The due time as a UTC ISO string, for exact comparison. */
const due = (anchor: DueAnchorValue, amount: number, unit: DueUnit, zone: string) =>
  addDue(anchor, amount, unit, zone).toISOString();
/** The due time as local ISO time in the zone (with its offset). */
const local = (anchor: DueAnchorValue, amount: number, unit: DueUnit, zone: string) =>
  DateTime.fromJSDate(addDue(anchor, amount, unit, zone), { zone }).toISO();

describe('due dates', () => {
  describe('isTimeZone', () => {
    it('knows IANA names, matched case-insensitively as the tz database does', () => {
      for (const zone of [
        'UTC',
        'Europe/Berlin',
        NEW_YORK,
        'Asia/Kolkata',
        'utc',
        'europe/berlin',
      ]) {
        expect(isTimeZone(zone), zone).to.equal(true);
      }
    });

    it('refuses unknown names, offsets and the empty string', () => {
      for (const zone of ['Mars/Olympus', '', ' ', 'UTC+1', '+01:00', 'Z', 'local', 'Berlin']) {
        expect(isTimeZone(zone), JSON.stringify(zone)).to.equal(false);
      }
    });
  });

  describe('hours', () => {
    it('are exact elapsed time, fractional or negative', () => {
      expect(due(at('2026-03-10T12:00:00Z'), 1.5, 'hours', BERLIN)).to.equal(
        '2026-03-10T13:30:00.000Z',
      );
      expect(due(at('2026-03-10T12:00:00Z'), -36, 'hours', 'UTC')).to.equal(
        '2026-03-09T00:00:00.000Z',
      );
      expect(due(at('2026-03-10T12:00:00Z'), 0.0005, 'hours', 'UTC')).to.equal(
        '2026-03-10T12:00:01.800Z',
      );
    });

    it('ignore a daylight-saving change: 24 hours are 24 hours, not the same local time', () => {
      // 12:00 local on 28 March (UTC+1) + 24 h is 13:00 local on the 29th (UTC+2).
      expect(local(at('2026-03-28T11:00:00Z'), 24, 'hours', BERLIN)).to.equal(
        '2026-03-29T13:00:00.000+02:00',
      );
    });
  });

  describe('days', () => {
    it('are calendar days in the zone, forward and backward', () => {
      expect(local(at('2026-03-10T08:00:00Z'), 3, 'days', BERLIN)).to.equal(
        '2026-03-13T09:00:00.000+01:00',
      );
      expect(local(at('2026-03-10T08:00:00Z'), -10, 'days', BERLIN)).to.equal(
        '2026-02-28T09:00:00.000+01:00',
      );
      expect(due(at('2026-03-10T08:00:00Z'), 0, 'days', BERLIN)).to.equal(
        '2026-03-10T08:00:00.000Z',
      );
      // The local day, not the UTC one: 23:30 on the 10th in New York is the 11th in UTC.
      expect(local(at('2026-03-11T03:30:00Z'), 1, 'days', NEW_YORK)).to.equal(
        '2026-03-11T23:30:00.000-04:00',
      );
    });

    it('keep the local time across DST changes (23 or 25 hours elapse)', () => {
      // Europe/Berlin springs forward on 29 March: 09:00 to 09:00 is 23 hours.
      expect(due(at('2026-03-28T08:00:00Z'), 1, 'days', BERLIN)).to.equal(
        '2026-03-29T07:00:00.000Z',
      );
      expect(due(at('2026-03-30T07:00:00Z'), -2, 'days', BERLIN)).to.equal(
        '2026-03-28T08:00:00.000Z',
      );
      // New York springs forward on 8 March (23 hours) and falls back on 1 November (25 hours).
      expect(local(at('2026-03-07T14:00:00Z'), 1, 'days', NEW_YORK)).to.equal(
        '2026-03-08T09:00:00.000-04:00',
      );
      expect(due(at('2026-03-07T14:00:00Z'), 1, 'days', NEW_YORK)).to.equal(
        '2026-03-08T13:00:00.000Z',
      );
      expect(local(at('2026-10-31T13:00:00Z'), 1, 'days', NEW_YORK)).to.equal(
        '2026-11-01T09:00:00.000-05:00',
      );
      expect(due(at('2026-10-31T13:00:00Z'), 1, 'days', NEW_YORK)).to.equal(
        '2026-11-01T14:00:00.000Z',
      );
    });

    it('move a local time the clocks skip forward by the gap', () => {
      // 02:30 on 29 March does not exist in Berlin (02:00 jumps to 03:00): 03:30 it is.
      expect(local(at('2026-03-28T01:30:00Z'), 1, 'days', BERLIN)).to.equal(
        '2026-03-29T03:30:00.000+02:00',
      );
      // The day after is at 02:30 again: the shift is the gap day's alone.
      expect(local(at('2026-03-28T01:30:00Z'), 2, 'days', BERLIN)).to.equal(
        '2026-03-30T02:30:00.000+02:00',
      );
    });

    it('must be whole', () => {
      expect(() => addDue(at('2026-03-10T08:00:00Z'), 1.5, 'days', BERLIN)).to.throw(RangeError);
    });
  });

  describe('business days', () => {
    // 2026-03-23 is a Monday; 2026-03-27 a Friday, the 28th and 29th the weekend.
    const day = (date: string, amount: number) =>
      DateTime.fromJSDate(addDue(at(`${date}T10:00:00Z`), amount, 'business_days', 'UTC'), {
        zone: 'UTC',
      }).toFormat('yyyy-MM-dd ccc HH:mm');

    it('count each weekday after the anchor day, skipping weekends', () => {
      const cases: Array<[string, number, string]> = [
        ['2026-03-23', 1, '2026-03-24 Tue'], // Monday + 1
        ['2026-03-27', 1, '2026-03-30 Mon'], // Friday + 1
        ['2026-03-27', 2, '2026-03-31 Tue'], // Friday + 2
        ['2026-03-28', 1, '2026-03-30 Mon'], // Saturday + 1
        ['2026-03-29', 1, '2026-03-30 Mon'], // Sunday + 1
        ['2026-03-29', 5, '2026-04-03 Fri'], // Sunday + 5
        ['2026-03-26', 2, '2026-03-30 Mon'], // Thursday + 2
        ['2026-03-27', 5, '2026-04-03 Fri'], // Friday + 5: a week
        ['2026-03-25', 10, '2026-04-08 Wed'], // Wednesday + 10: two weeks
        ['2026-03-25', 262, '2027-03-26 Fri'], // 52 weeks and 2 days
      ];
      for (const [from, n, to] of cases)
        expect(day(from, n), `${from} + ${n}`).to.equal(`${to} 10:00`);
    });

    it('count backward as a mirror', () => {
      const cases: Array<[string, number, string]> = [
        ['2026-03-24', -1, '2026-03-23 Mon'], // Tuesday - 1
        ['2026-03-30', -1, '2026-03-27 Fri'], // Monday - 1
        ['2026-03-31', -2, '2026-03-27 Fri'], // Tuesday - 2
        ['2026-03-29', -1, '2026-03-27 Fri'], // Sunday - 1
        ['2026-03-28', -1, '2026-03-27 Fri'], // Saturday - 1
        ['2026-03-28', -5, '2026-03-23 Mon'], // Saturday - 5
        ['2026-04-03', -5, '2026-03-27 Fri'], // Friday - 5: a week
        ['2026-04-08', -10, '2026-03-25 Wed'], // two weeks
      ];
      for (const [from, n, to] of cases)
        expect(day(from, n), `${from} ${n}`).to.equal(`${to} 10:00`);
    });

    it('leave the anchor as it is for 0, even on a weekend', () => {
      expect(day('2026-03-28', 0)).to.equal('2026-03-28 Sat 10:00');
      expect(day('2026-03-25', 0)).to.equal('2026-03-25 Wed 10:00');
    });

    it('are weekdays of the zone, not of UTC', () => {
      // 23:30 on Friday in New York is already Saturday in UTC: Friday + 1 is Monday, 23:30.
      expect(local(at('2026-03-28T03:30:00Z'), 1, 'business_days', NEW_YORK)).to.equal(
        '2026-03-30T23:30:00.000-04:00',
      );
      // 00:30 on Monday in Berlin is still Sunday in UTC: Monday - 1 is Friday, 00:30.
      expect(local(at('2026-03-29T22:30:00Z'), -1, 'business_days', BERLIN)).to.equal(
        '2026-03-27T00:30:00.000+01:00',
      );
    });

    it('keep the local time across DST changes', () => {
      // Berlin: Friday 27 March 09:00 (UTC+1) + 2 is Tuesday 31 March 09:00 (UTC+2).
      expect(due(at('2026-03-27T08:00:00Z'), 2, 'business_days', BERLIN)).to.equal(
        '2026-03-31T07:00:00.000Z',
      );
      expect(due(at('2026-03-31T07:00:00Z'), -2, 'business_days', BERLIN)).to.equal(
        '2026-03-27T08:00:00.000Z',
      );
      // New York: Friday 6 March 10:00 (UTC-5) + 1 is Monday 9 March 10:00 (UTC-4).
      expect(due(at('2026-03-06T15:00:00Z'), 1, 'business_days', NEW_YORK)).to.equal(
        '2026-03-09T14:00:00.000Z',
      );
      // Friday 30 October 10:00 (UTC-4) + 1 is Monday 2 November 10:00 (UTC-5), and back.
      expect(due(at('2026-10-30T14:00:00Z'), 1, 'business_days', NEW_YORK)).to.equal(
        '2026-11-02T15:00:00.000Z',
      );
      expect(due(at('2026-11-02T15:00:00Z'), -1, 'business_days', NEW_YORK)).to.equal(
        '2026-10-30T14:00:00.000Z',
      );
    });

    it('keep a local time that a skipped weekend day lacked', () => {
      // Saturday 28 March 02:30 in Berlin + 1 is Monday 02:30, untouched by Sunday's gap.
      expect(local(at('2026-03-28T01:30:00Z'), 1, 'business_days', BERLIN)).to.equal(
        '2026-03-30T02:30:00.000+02:00',
      );
    });

    it('must be whole', () => {
      expect(() => addDue(at('2026-03-10T08:00:00Z'), 0.5, 'business_days', 'UTC')).to.throw(
        RangeError,
      );
    });
  });

  describe('date anchors', () => {
    it('stand for the end of the day in the zone', () => {
      // Friday 27 March in Berlin ends at 23:59:59.999 UTC+1.
      expect(due({ date: '2026-03-27' }, 0, 'days', BERLIN)).to.equal('2026-03-27T22:59:59.999Z');
      expect(due({ date: '2026-03-27' }, 0, 'business_days', BERLIN)).to.equal(
        '2026-03-27T22:59:59.999Z',
      );
      // + 2 business days: the end of Tuesday 31 March, by then UTC+2.
      expect(due({ date: '2026-03-27' }, 2, 'business_days', BERLIN)).to.equal(
        '2026-03-31T21:59:59.999Z',
      );
      // + 2 days: the end of Sunday 29 March, the day the clocks changed.
      expect(due({ date: '2026-03-27' }, 2, 'days', BERLIN)).to.equal('2026-03-29T21:59:59.999Z');
      // New York's 1 November lasts 25 hours and ends at 23:59:59.999 UTC-5.
      expect(due({ date: '2026-11-01' }, 0, 'days', NEW_YORK)).to.equal('2026-11-02T04:59:59.999Z');
      expect(due({ date: '2026-11-02' }, -1, 'business_days', NEW_YORK)).to.equal(
        '2026-10-31T03:59:59.999Z',
      );
      // Hours count from the end of the day too.
      expect(due({ date: '2026-03-28' }, 1, 'hours', BERLIN)).to.equal('2026-03-28T23:59:59.999Z');
      expect(due({ date: '2026-03-28' }, -24, 'hours', 'UTC')).to.equal('2026-03-27T23:59:59.999Z');
    });

    it('must be plain calendar dates', () => {
      for (const date of ['2026-02-30', '2026-3-01', '2026-03-01T10:00', '2026-W13', '', 'today']) {
        expect(() => addDue({ date }, 1, 'days', BERLIN), date).to.throw(RangeError);
      }
    });
  });

  it('refuses an unknown zone, an amount that is not finite and an invalid instant', () => {
    expect(() => addDue(at('2026-03-10T08:00:00Z'), 1, 'days', 'Mars/Olympus')).to.throw(
      RangeError,
    );
    expect(() => addDue(at('2026-03-10T08:00:00Z'), Number.NaN, 'hours', 'UTC')).to.throw(
      RangeError,
    );
    expect(() => addDue(at('2026-03-10T08:00:00Z'), Infinity, 'days', 'UTC')).to.throw(RangeError);
    expect(() => addDue({ instant: new Date(Number.NaN) }, 1, 'days', 'UTC')).to.throw(RangeError);
  });

  describe('business days, for any anchor', () => {
    // Zones whose clocks change on Sundays (or never), and one far from UTC each way.
    const zone = fc.constantFrom(
      'UTC',
      BERLIN,
      NEW_YORK,
      'Asia/Tokyo',
      'Asia/Kolkata',
      'Australia/Sydney',
      'Pacific/Auckland',
      'America/Los_Angeles',
    );
    const instant = fc
      .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2040-12-31T00:00:00Z') })
      .filter((d) => !Number.isNaN(d.getTime()));
    const anchor: fc.Arbitrary<DueAnchorValue> = fc.oneof(
      instant.map((d) => ({ instant: d })),
      instant.map((d) => ({ date: d.toISOString().slice(0, 10) })),
    );
    const count = fc.integer({ min: -400, max: 400 });

    const localOf = (a: DueAnchorValue, z: string) =>
      'instant' in a
        ? DateTime.fromJSDate(a.instant, { zone: z })
        : DateTime.fromISO(a.date, { zone: z }).endOf('day');
    const timeOfDay = (t: DateTime) => t.toFormat('HH:mm:ss.SSS');

    it('fall on Monday to Friday and keep the local time of day', () => {
      fc.assert(
        fc.property(anchor, count, zone, (a, n, z) => {
          fc.pre(n !== 0);
          const start = localOf(a, z);
          const result = DateTime.fromJSDate(addDue(a, n, 'business_days', z), { zone: z });
          expect(result.weekday, result.toISO() ?? '').to.be.at.most(5);
          // Unless the anchor's local time does not exist on the day reached (a DST gap).
          const wanted = result.set({
            hour: start.hour,
            minute: start.minute,
            second: start.second,
            millisecond: start.millisecond,
          });
          if (timeOfDay(wanted) === timeOfDay(start)) {
            expect(timeOfDay(result)).to.equal(timeOfDay(start));
          }
          // Forward lands after the anchor, backward before it.
          expect(Math.sign(result.toMillis() - start.toMillis())).to.equal(Math.sign(n));
        }),
        { numRuns: 2000 },
      );
    });

    it('agree with luxon: the same instant, or the same wall-clock time where clocks go back', () => {
      const unit = fc.constantFrom('hours' as const, 'days' as const, 'business_days' as const);
      fc.assert(
        fc.property(anchor, count, unit, zone, (a, n, u, z) => {
          const start = localOf(a, z);
          const reference =
            u === 'hours'
              ? start.plus({ hours: n })
              : u === 'days'
                ? start.plus({ days: n })
                : start.plus({ days: businessDaysByLoop(start.weekday, n) });
          const ours = DateTime.fromJSDate(addDue(a, n, u, z), { zone: z });
          if (ours.toMillis() !== reference.toMillis()) {
            // A local time that happens twice: both are readings of the same wall clock.
            expect(ours.toFormat('yyyy-MM-dd HH:mm:ss.SSS')).to.equal(
              reference.toFormat('yyyy-MM-dd HH:mm:ss.SSS'),
            );
          }
        }),
        { numRuns: 3000 },
      );
    });

    it('come back to a weekday anchor after n then -n', () => {
      fc.assert(
        fc.property(anchor, count, zone, (a, n, z) => {
          fc.pre(localOf(a, z).weekday <= 5);
          const there = addDue(a, n, 'business_days', z);
          const back = addDue({ instant: there }, -n, 'business_days', z);
          expect(back.toISOString()).to.equal(localOf(a, z).toJSDate().toISOString());
        }),
        { numRuns: 2000 },
      );
    });
  });
});

/** Business days counted one day at a time: the plain reference of the closed form. */
function businessDaysByLoop(weekday: number, count: number): number {
  let days = 0;
  let day = weekday;
  for (let left = Math.abs(count); left > 0;) {
    days += Math.sign(count);
    day = ((((day - 1 + Math.sign(count)) % 7) + 7) % 7) + 1;
    if (day <= 5) left--;
  }
  return days;
}
