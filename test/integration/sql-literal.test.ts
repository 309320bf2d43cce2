// The literals of the hand-written run INSERT must store exactly what they are given: any
// text (quotes, backslashes, control characters, placeholders, every plane of Unicode), dates
// to the millisecond in UTC, numbers and NULL. Checked by a round trip through the database.
import { expect } from 'chai';
import fc from 'fast-check';
import { sqlLiteral, type SqlValue } from '../../src/lib/sql-literal.js';
import { testDb } from '../support/root-hooks.js';

const TABLE = 'sql_literal_roundtrip';

// Any code point, with the characters that need escaping drawn far more often than chance.
const character = fc.oneof(
  fc.constantFrom("'", '\\', '\0', '\x1a', '\n', '\r', '"', '?', '`'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

describe('sqlLiteral', () => {
  const db = () => testDb();

  before(async () => {
    await db().raw(`DROP TABLE IF EXISTS ${TABLE}`);
    await db().raw(
      `CREATE TABLE ${TABLE} (k INT PRIMARY KEY, t LONGTEXT CHARACTER SET utf8mb4 NULL, ` +
        'd DATETIME(3) NULL, n BIGINT NULL)',
    );
  });

  after(() => db().raw(`DROP TABLE IF EXISTS ${TABLE}`));

  async function roundTrip(rows: Array<[string | null, Date | null, number | null]>) {
    await db().raw(`DELETE FROM ${TABLE}`);
    const values = rows.map(
      ([t, d, n], k) => `(${[k, t, d, n].map((v) => sqlLiteral(v as SqlValue)).join(', ')})`,
    );
    await db().raw(`INSERT INTO ${TABLE} (k, t, d, n) VALUES ${values.join(', ')}`);
    const read = (await db()(TABLE).select('t', 'd', 'n').orderBy('k')) as Array<{
      t: string | null;
      d: Date | null;
      n: number | string | null;
    }>;
    return read.map((r) => [r.t, r.d, r.n === null ? null : Number(r.n)]);
  }

  it('stores hostile text exactly, including what looks like placeholders or SQL', async () => {
    const texts = [
      "'",
      "\\'",
      '\\',
      '\\\\',
      '\0',
      '\x1a',
      '\r\n\t\b',
      '"',
      '? ?? ???',
      ':name',
      "' OR 1=1; DROP TABLE workflow_runs; --",
      '/* comment */ # hash -- dash',
      '😀 𝄞 中文 é',
      '',
    ];
    const read = await roundTrip(texts.map((t) => [t, null, null]));
    expect(read.map((r) => r[0])).to.deep.equal(texts);
  });

  it('round-trips any Unicode text, any millisecond date and any safe integer', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            fc.option(fc.string({ unit: character, maxLength: 40 })),
            fc.option(
              fc.date({
                min: new Date('1970-01-02T00:00:00Z'),
                max: new Date('9999-12-31T23:59:59.999Z'),
                noInvalidDate: true,
              }),
            ),
            fc.option(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 })),
          ),
          { minLength: 1, maxLength: 20 },
        ),
        async (rows) => {
          const read = await roundTrip(rows);
          expect(read).to.deep.equal(rows);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('refuses values it cannot write faithfully', () => {
    expect(() => sqlLiteral(Number.NaN)).to.throw(TypeError);
    expect(() => sqlLiteral(Number.POSITIVE_INFINITY)).to.throw(TypeError);
    expect(() => sqlLiteral(new Date(Number.NaN))).to.throw(TypeError);
  });
});
