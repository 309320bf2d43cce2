// Typed input fields: each type's one string form, its limits, the empty values, and the
// checks of a field's definition when a template is saved.
import { expect } from 'chai';
import fc from 'fast-check';
import { DomainError } from '../../src/errors.js';
import type {
  FieldType,
  TemplateInputField,
} from '../../src/templates/definition/definition-types.js';
import { TEMPLATE_LIMITS } from '../../src/templates/definition/definition-types.js';
import { checkFieldDefinition } from '../../src/templates/definition/field-checks.js';
import {
  fieldType,
  isEmptyValue,
  missingRequired,
  parseFieldValue,
  valueProblem,
} from '../../src/templates/definition/field-values.js';

function field(type: FieldType | undefined, more: Partial<TemplateInputField> = {}) {
  const f: TemplateInputField = { inputId: 'f', fieldName: 'F', ...more };
  if (type !== undefined) f.type = type;
  return f;
}

/** Each value is accepted by the field. */
function accepts(f: TemplateInputField, values: string[]) {
  for (const v of values) expect(valueProblem(f, v), JSON.stringify(v)).to.equal(undefined);
}

/** Each value is refused by the field, with a reason matching `reason`. */
function refuses(f: TemplateInputField, values: string[], reason: RegExp) {
  for (const v of values) expect(valueProblem(f, v), JSON.stringify(v)).to.match(reason);
}

/** The definition is refused as invalid_template_field, pointing at `at` under the path. */
function refusedAt(f: TemplateInputField, at: string, message: RegExp) {
  try {
    checkFieldDefinition(f, ['pages', 2, 'inputFields', 5]);
  } catch (err) {
    expect(err).to.be.instanceOf(DomainError);
    expect((err as DomainError).code).to.equal('invalid_template_field');
    expect((err as DomainError).field).to.equal(`/pages/2/inputFields/5/${at}`);
    expect((err as Error).message).to.match(message);
    return;
  }
  expect.fail(`expected a refusal at ${at}`);
}

function allowed(f: TemplateInputField) {
  expect(() => checkFieldDefinition(f, ['pages', 0, 'inputFields', 0])).to.not.throw();
}

describe('field values', () => {
  it('reads a field without a type as text', () => {
    expect(fieldType(field(undefined))).to.equal('text');
    expect(fieldType(field('date'))).to.equal('date');
    expect(parseFieldValue(field(undefined), ' any thing ')).to.deep.equal({
      kind: 'text',
      text: ' any thing ',
    });
  });

  describe('text and long_text', () => {
    it('take any string', () => {
      for (const type of ['text', 'long_text'] as const) {
        accepts(field(type), ['x', ' padded ', 'line\nbreak', '😀', '42', '[]']);
        expect(parseFieldValue(field(type), 'a\nb')).to.deep.equal({ kind: 'text', text: 'a\nb' });
      }
    });

    it('count lengths in code points, not UTF-16 units', () => {
      const f = field('text', { minLength: 2, maxLength: 3 });
      accepts(f, ['ab', 'abc', '😀😀', '😀😀😀', 'é😀']);
      refuses(f, ['a', '😀'], /^is shorter than the minimum of 2 characters$/);
      refuses(f, ['abcd', '😀😀😀😀'], /^is longer than the maximum of 3 characters$/);
      // A lone surrogate is one character.
      accepts(field('text', { maxLength: 1 }), ['\ud800']);
    });

    it('match the pattern against the whole value', () => {
      const f = field('text', { pattern: '[A-Z]{2}-[0-9]{4}' });
      accepts(f, ['AB-1234']);
      refuses(f, ['xAB-1234', 'AB-12345', 'ab-1234', ''], /^does not match the pattern$/);
      // Whole-value, even where the leftmost alternative would stop short.
      accepts(field('text', { pattern: 'a|ab' }), ['a', 'ab']);
      // Code points: "." is one character, astral or not.
      accepts(field('text', { pattern: '.' }), ['😀']);
    });

    it('check lengths before the pattern', () => {
      const f = field('text', { maxLength: 3, pattern: '[0-9]+' });
      expect(valueProblem(f, 'abcdef')).to.match(/longer/);
      expect(valueProblem(f, 'ab')).to.match(/pattern/);
    });

    it('compile a field pattern once, and again when the pattern changes', () => {
      const f = field('text', { pattern: '[0-9]+' });
      accepts(f, ['123']);
      accepts(f, ['456']);
      f.pattern = '[a-z]+';
      accepts(f, ['abc']);
      refuses(f, ['123'], /pattern/);
    });

    it('finish a pathological pattern in linear time', () => {
      const f = field('text', { pattern: '(a+)+$' });
      allowed(f);
      const evil = `${'a'.repeat(100_000)}!`;
      expect(valueProblem(f, evil)).to.equal('does not match the pattern');
      accepts(f, ['a'.repeat(100_000)]);
      // The classic exponential-backtracking email pattern, too.
      const g = field('text', { pattern: '([a-zA-Z0-9]+\\.?)+@x' });
      expect(valueProblem(g, `${'a'.repeat(50_000)}!`)).to.equal('does not match the pattern');
    });
  });

  describe('number', () => {
    const f = field('number');

    it('takes the documented form', () => {
      const cases: Array<[string, number]> = [
        ['42', 42],
        ['-3.5', -3.5],
        ['0.25', 0.25],
        ['0', 0],
        ['-0', 0],
        ['10.0', 10],
        ['123456789012345678901234567890', 1.2345678901234568e29],
        ['9'.repeat(40), Number('9'.repeat(40))],
      ];
      for (const [raw, n] of cases) {
        expect(parseFieldValue(f, raw), raw).to.deep.equal({ kind: 'number', number: n });
        expect(valueProblem(f, raw), raw).to.equal(undefined);
      }
      expect(Object.is((parseFieldValue(f, '-0') as { number: number }).number, 0)).to.equal(true);
    });

    it('refuses anything else', () => {
      const bad = [
        '1e3',
        '1E3',
        '+1',
        '01',
        '-01',
        '00',
        '1.',
        '.5',
        '-',
        '1.2.3',
        ' 1',
        '1 ',
        '1,5',
        '1_000',
        'NaN',
        'Infinity',
        '-Infinity',
        '0x10',
        '٤٢',
        '',
        '9'.repeat(41),
      ];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not a number: write it as 42 or -3\.5$/);
    });

    it('takes only whole values when integer', () => {
      const g = field('number', { integer: true });
      accepts(g, ['42', '-7', '42.0', '42.000', '0']);
      refuses(g, ['42.5', '-0.1', '1.0000000000000000001'], /^is not a whole number$/);
      // The form is checked first.
      refuses(g, ['4e1'], /^is not a number/);
    });

    it('checks inclusive bounds', () => {
      const g = field('number', { min: -1.5, max: 100 });
      accepts(g, ['-1.5', '0', '100', '100.0', '99.999']);
      refuses(g, ['-1.51', '-2'], /^is less than the minimum -1\.5$/);
      refuses(g, ['100.0001', '101'], /^is more than the maximum 100$/);
    });
  });

  describe('email', () => {
    const f = field('email');

    it('takes a pragmatic address', () => {
      accepts(f, ['ann@example.com', 'a.b+tag@mail.example.co.uk', 'x@y.z', 'ünï@exämple.de']);
      expect(parseFieldValue(f, 'ann@example.com')).to.deep.equal({
        kind: 'text',
        text: 'ann@example.com',
      });
    });

    it('refuses anything else', () => {
      const bad = [
        'ann',
        'ann@',
        '@example.com',
        'ann@example',
        'ann@@example.com',
        'a@b@example.com',
        'ann @example.com',
        'ann@exa mple.com',
        ' ann@example.com',
        'ann@example.com\n',
        'ann@.example.com',
        'ann@example.',
        'ann@example..com',
      ];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not an email address: write it as name@example\.com$/);
    });

    it('takes at most 254 characters', () => {
      const at254 = `${'a'.repeat(64)}@${'b'.repeat(185)}.com`;
      expect(at254).to.have.length(254);
      accepts(f, [at254]);
      refuses(f, [`a${at254}`], /longer than 254/);
    });

    it('takes the text limits', () => {
      const g = field('email', { pattern: '[^@]+@example\\.com', maxLength: 20 });
      accepts(g, ['ann@example.com']);
      refuses(g, ['ann@example.org'], /pattern/);
      refuses(g, ['annabelle@example.com'], /longer than the maximum of 20/);
    });
  });

  describe('url', () => {
    const f = field('url');

    it('takes an absolute http or https URL with a host', () => {
      accepts(f, [
        'https://example.com',
        'http://example.com/a/b?c=d#e',
        'HTTPS://EXAMPLE.COM/',
        'https://user:pw@example.com:8443/x',
        'https://[::1]/',
        'https://bücher.example/ü',
      ]);
      expect(parseFieldValue(f, 'https://example.com')).to.deep.equal({
        kind: 'text',
        text: 'https://example.com',
      });
    });

    it('refuses anything else', () => {
      const bad = [
        'example.com',
        '/relative/path',
        'ftp://example.com',
        'mailto:ann@example.com',
        'javascript:alert(1)',
        'http://',
        'https://',
        'http:example.com',
        'http:\\\\example.com',
        ' https://example.com',
        'https://example.com ',
        'https://exa mple.com',
        'https://example.com/a b',
        'https://example.com/\tx',
        'https://exa\u0000mple.com',
        'https://example.com:99999',
      ];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not a web address/);
    });

    it('takes at most 2048 characters', () => {
      const base = 'https://example.com/';
      accepts(f, [base + 'a'.repeat(2048 - base.length)]);
      refuses(f, [base + 'a'.repeat(2049 - base.length)], /longer than 2048/);
    });

    it('takes the text limits', () => {
      refuses(field('url', { pattern: 'https://.*' }), ['http://example.com'], /pattern/);
      refuses(field('url', { minLength: 30 }), ['https://example.com'], /shorter/);
    });
  });

  describe('date', () => {
    const f = field('date');

    it('takes a day of the calendar as YYYY-MM-DD', () => {
      for (const raw of [
        '2026-03-31',
        '2028-02-29',
        '2000-02-29',
        '0001-01-01',
        '9999-12-31',
        '2026-12-31',
      ]) {
        expect(parseFieldValue(f, raw), raw).to.deep.equal({ kind: 'date', date: raw });
        expect(valueProblem(f, raw), raw).to.equal(undefined);
      }
    });

    it('refuses anything else', () => {
      const bad = [
        '2026-02-29',
        '1900-02-29',
        '2026-04-31',
        '2026-13-01',
        '2026-00-10',
        '2026-01-00',
        '2026-01-32',
        '0000-01-01',
        '2026-1-01',
        '2026-01-1',
        '26-01-01',
        '12026-01-01',
        '2026/01/01',
        '2026-01-01T00:00:00Z',
        ' 2026-01-01',
        '2026-01-0a',
        '２０２６-01-01',
        '',
      ];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not a date: write it as YYYY-MM-DD/);
    });

    it('compares as a string in calendar order', () => {
      expect('2026-03-31' < '2026-10-01').to.equal(true);
      expect('0999-12-31' < '1000-01-01').to.equal(true);
    });
  });

  describe('datetime', () => {
    const f = field('datetime');
    const ms = (raw: string) => (parseFieldValue(f, raw) as { ms: number } | undefined)?.ms;

    it('takes RFC 3339 with seconds and an offset, read as the instant', () => {
      const cases: Array<[string, number]> = [
        ['2026-03-31T14:30:00Z', Date.UTC(2026, 2, 31, 14, 30, 0)],
        ['2026-03-31T14:30:00+02:00', Date.UTC(2026, 2, 31, 12, 30, 0)],
        ['2026-03-31T14:30:00-05:30', Date.UTC(2026, 2, 31, 20, 0, 0)],
        ['2026-03-31T14:30:00-00:00', Date.UTC(2026, 2, 31, 14, 30, 0)],
        ['2026-03-31T14:30:00.5Z', Date.UTC(2026, 2, 31, 14, 30, 0, 500)],
        ['2026-03-31T14:30:00.05Z', Date.UTC(2026, 2, 31, 14, 30, 0, 50)],
        ['2026-03-31T14:30:00.123Z', Date.UTC(2026, 2, 31, 14, 30, 0, 123)],
        ['2026-03-31T14:30:00.123999999Z', Date.UTC(2026, 2, 31, 14, 30, 0, 123)],
        ['2028-02-29T23:59:59+23:59', Date.UTC(2028, 1, 29, 0, 0, 59)],
        ['1970-01-01T00:00:00Z', 0],
        ['1969-12-31T23:59:59.999Z', -1],
        ['9999-12-31T23:59:59Z', Date.UTC(9999, 11, 31, 23, 59, 59)],
        ['0001-01-01T00:00:00Z', Date.parse('0001-01-01T00:00:00Z')],
        ['0099-06-15T12:00:00Z', Date.parse('0099-06-15T12:00:00Z')],
      ];
      for (const [raw, expected] of cases) {
        expect(ms(raw), raw).to.equal(expected);
        expect(valueProblem(f, raw), raw).to.equal(undefined);
      }
      // Equal instants written in different offsets read the same.
      expect(ms('2026-01-01T00:00:00+01:00')).to.equal(ms('2025-12-31T23:00:00Z'));
    });

    it('agrees with Date on random instants and offsets', () => {
      fc.assert(
        fc.property(
          fc.date({
            min: new Date('0001-01-01T00:00:00Z'),
            max: new Date('9999-12-31T23:59:59.999Z'),
            noInvalidDate: true,
          }),
          fc.integer({ min: -(23 * 60 + 59), max: 23 * 60 + 59 }),
          (d, offset) => {
            // Write the instant in local time at the given offset.
            const local = new Date(d.getTime() + offset * 60_000);
            if (local.getUTCFullYear() < 1 || local.getUTCFullYear() > 9999) return;
            const abs = Math.abs(offset);
            const sign = offset < 0 ? '-' : '+';
            const zone = `${sign}${pad(Math.floor(abs / 60), 2)}:${pad(abs % 60, 2)}`;
            const raw = `${local.toISOString().slice(0, 23)}${zone}`;
            expect(ms(raw), raw).to.equal(d.getTime());
          },
        ),
      );
    });

    it('refuses anything else', () => {
      const bad = [
        '2026-03-31T14:30Z',
        '2026-03-31T14:30:00',
        '2026-03-31 14:30:00Z',
        '2026-03-31t14:30:00Z',
        '2026-03-31T14:30:00z',
        '2026-03-31T24:00:00Z',
        '2026-03-31T14:60:00Z',
        '2026-03-31T14:30:60Z',
        '2026-02-29T14:30:00Z',
        '2026-03-31T14:30:00.Z',
        '2026-03-31T14:30:00.1234567890Z',
        '2026-03-31T14:30:00+2:00',
        '2026-03-31T14:30:00+02',
        '2026-03-31T14:30:00+0200',
        '2026-03-31T14:30:00+24:00',
        '2026-03-31T14:30:00+02:60',
        '2026-03-31T14:30:00Z ',
        '2026-03-31T14:30:00+02:00x',
        '2026-03-31',
        '0000-12-31T14:30:00Z',
        '',
      ];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not a date and time: write it as RFC 3339/);
    });
  });

  describe('select', () => {
    const f = field('select', { options: ['Email', 'Phone', 'A, B'] });

    it('takes exactly one of the options', () => {
      accepts(f, ['Email', 'Phone', 'A, B']);
      expect(parseFieldValue(f, 'Email')).to.deep.equal({ kind: 'text', text: 'Email' });
    });

    it('refuses anything else, case-sensitively', () => {
      refuses(f, ['email', 'Email ', 'Fax', '["Email"]'], /^is not one of the options$/);
      refuses(field('select'), ['Email'], /^is not one of the options$/);
    });
  });

  describe('multi_select', () => {
    const f = field('multi_select', { options: ['Email', 'Phone', 'A, B'] });

    it('takes a JSON array of options, in the order given', () => {
      accepts(f, ['["Email"]', '["Phone","Email"]', '["A, B","Email"]', ' [ "Email" , "Phone" ] ']);
      expect(parseFieldValue(f, '["Phone","Email"]')).to.deep.equal({
        kind: 'options',
        options: ['Phone', 'Email'],
      });
      expect(parseFieldValue(f, '[]')).to.deep.equal({ kind: 'options', options: [] });
    });

    it('refuses what is not a JSON array of strings', () => {
      const bad = [
        'Email',
        'Email,Phone',
        '"Email"',
        '{"a":"Email"}',
        '[1]',
        '["Email",null]',
        '[',
        'null',
      ];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not a list of options: write it as a JSON array of strings/);
    });

    it('refuses values not among the options, and duplicates', () => {
      refuses(f, ['["Email","Fax"]', '["email"]', '["A","B"]'], /which is not one of the options$/);
      refuses(f, ['["Email","Phone","Email"]'], /^holds "Email" twice$/);
      // A long value is cut short in the message.
      expect(valueProblem(f, JSON.stringify(['x'.repeat(1000)]))?.length).to.be.lessThan(100);
    });
  });

  describe('checkbox', () => {
    const f = field('checkbox');

    it('takes exactly "true" or "false"', () => {
      expect(parseFieldValue(f, 'true')).to.deep.equal({ kind: 'checkbox', checked: true });
      expect(parseFieldValue(f, 'false')).to.deep.equal({ kind: 'checkbox', checked: false });
      accepts(f, ['true', 'false']);
      const bad = ['TRUE', 'True', 'yes', '1', 'on', ' true', ''];
      for (const raw of bad) expect(parseFieldValue(f, raw), raw).to.equal(undefined);
      refuses(f, bad, /^is not a checkbox value: write it as "true" or "false"$/);
    });
  });

  describe('empty values', () => {
    it('are absent, only whitespace, or an empty list for multi_select', () => {
      for (const type of [
        'text',
        'number',
        'date',
        'select',
        'checkbox',
        'multi_select',
      ] as const) {
        for (const raw of [undefined, '', ' ', '\t\n', '\u00a0']) {
          expect(isEmptyValue(field(type), raw), `${type} ${JSON.stringify(raw)}`).to.equal(true);
        }
        expect(isEmptyValue(field(type), 'x'), type).to.equal(false);
      }
      const multi = field('multi_select', { options: ['a'] });
      for (const raw of ['[]', ' [ ] ', '[\n]'])
        expect(isEmptyValue(multi, raw), raw).to.equal(true);
      expect(isEmptyValue(multi, '["a"]')).to.equal(false);
      expect(isEmptyValue(multi, '[""]')).to.equal(false);
      // "[]" is a value for any other type.
      expect(isEmptyValue(field('text'), '[]')).to.equal(false);
      expect(isEmptyValue(field('checkbox'), 'false')).to.equal(false);
    });
  });

  describe('missingRequired', () => {
    it('is true for a required field without a value', () => {
      const f = field('text', { required: true });
      expect(missingRequired(f, undefined)).to.equal(true);
      expect(missingRequired(f, '  ')).to.equal(true);
      expect(missingRequired(f, 'x')).to.equal(false);
      expect(missingRequired(field('multi_select', { required: true }), '[]')).to.equal(true);
      expect(missingRequired(field('multi_select', { required: true }), '["a"]')).to.equal(false);
    });

    it('wants a required checkbox ticked', () => {
      const f = field('checkbox', { required: true });
      expect(missingRequired(f, 'true')).to.equal(false);
      for (const raw of [undefined, '', 'false', 'TRUE', 'yes']) {
        expect(missingRequired(f, raw), String(raw)).to.equal(true);
      }
    });

    it('is false for a field that is not required', () => {
      expect(missingRequired(field('text'), undefined)).to.equal(false);
      expect(missingRequired(field('checkbox', { required: false }), 'false')).to.equal(false);
    });
  });

  describe('checkFieldDefinition', () => {
    it('allows sound definitions', () => {
      allowed(field(undefined));
      allowed(field('text', { minLength: 1, maxLength: 10, pattern: '[a-z]+', default: 'abc' }));
      allowed(field('long_text', { minLength: 0, maxLength: 0 }));
      allowed(field('email', { pattern: '.+@example\\.com', default: 'a@example.com' }));
      allowed(field('url', { maxLength: 100, default: 'https://example.com' }));
      allowed(field('number', { min: 1, max: 1, integer: true, default: '1' }));
      allowed(field('number', { min: -5, integer: false }));
      allowed(field('date', { default: '2028-02-29' }));
      allowed(field('datetime', { default: '2026-03-31T14:30:00Z' }));
      allowed(field('select', { options: ['a'], default: 'a' }));
      allowed(field('multi_select', { options: ['a', 'b'], default: '["b","a"]' }));
      allowed(field('checkbox', { required: true, default: 'false' }));
      allowed(field('select', { options: Array.from({ length: 500 }, (_, i) => `o${i}`) }));
      allowed(field('select', { options: ['x'.repeat(255), '😀'.repeat(255)] }));
      allowed(field('text', { pattern: 'x'.repeat(TEMPLATE_LIMITS.patternLength) }));
    });

    it('allows an empty default', () => {
      allowed(field('number', { default: '' }));
      allowed(field('select', { options: ['a'], default: '  ' }));
      allowed(field('multi_select', { options: ['a'], default: '[]' }));
    });

    it('refuses a property the type does not take', () => {
      for (const type of ['text', 'date', 'select', 'checkbox'] as const) {
        const options = type === 'select' ? ['a'] : undefined;
        refusedAt(field(type, { options, min: 1 }), 'min', /min applies only to number fields/);
        refusedAt(field(type, { options, max: 1 }), 'max', /max applies only to number fields/);
        refusedAt(field(type, { options, integer: false }), 'integer', /only to number fields/);
      }
      for (const type of [
        'number',
        'date',
        'datetime',
        'select',
        'multi_select',
        'checkbox',
      ] as const) {
        const options = type.endsWith('select') ? ['a'] : undefined;
        refusedAt(field(type, { options, minLength: 1 }), 'minLength', /minLength applies only to/);
        refusedAt(field(type, { options, maxLength: 1 }), 'maxLength', /maxLength applies only to/);
        refusedAt(field(type, { options, pattern: 'a' }), 'pattern', /pattern applies only to/);
      }
      for (const type of [undefined, 'text', 'number', 'checkbox'] as const) {
        refusedAt(field(type, { options: ['a'] }), 'options', /options apply only to select/);
      }
    });

    it('refuses a select or multi_select without sound options', () => {
      for (const type of ['select', 'multi_select'] as const) {
        refusedAt(field(type), 'options', /needs options/);
        refusedAt(field(type, { options: [] }), 'options', /needs options/);
        refusedAt(
          field(type, { options: Array.from({ length: 501 }, (_, i) => `o${i}`) }),
          'options',
          /at most 500 options/,
        );
        refusedAt(field(type, { options: ['a', ''] }), 'options/1', /1 to 255 characters/);
        refusedAt(field(type, { options: ['x'.repeat(256)] }), 'options/0', /1 to 255/);
        refusedAt(field(type, { options: ['a', 'b', 'c', 'b'] }), 'options/3', /"b" appears twice/);
      }
      // Options differing only in case are distinct.
      allowed(field('select', { options: ['a', 'A'] }));
    });

    it('refuses bounds out of order or not finite', () => {
      refusedAt(field('number', { min: 2, max: 1 }), 'max', /max 1 is less than min 2/);
      refusedAt(field('number', { min: Number.NaN }), 'min', /finite/);
      refusedAt(field('number', { max: Infinity }), 'max', /finite/);
      refusedAt(field('text', { minLength: 5, maxLength: 4 }), 'maxLength', /less than minLength/);
      refusedAt(field('text', { minLength: -1 }), 'minLength', /whole number/);
      refusedAt(field('text', { maxLength: 1.5 }), 'maxLength', /whole number/);
    });

    it('refuses a pattern too long or not RE2', () => {
      refusedAt(
        field('text', { pattern: 'x'.repeat(TEMPLATE_LIMITS.patternLength + 1) }),
        'pattern',
        /more than the 500 allowed/,
      );
      refusedAt(field('text', { pattern: '(a)\\1' }), 'pattern', /not a valid RE2 expression.*\\1/);
      refusedAt(field('text', { pattern: '(?=a)a' }), 'pattern', /not a valid RE2 expression/);
      refusedAt(field('text', { pattern: '(?!a)b' }), 'pattern', /not a valid RE2 expression/);
      refusedAt(field('text', { pattern: '[a-' }), 'pattern', /missing closing \]/);
      refusedAt(field('text', { pattern: 'a{1001}' }), 'pattern', /repeat count/);
      refusedAt(field('url', { pattern: '(' }), 'pattern', /not a valid RE2 expression/);
      // Short but too costly to run on every value.
      refusedAt(field('text', { pattern: '(?:\\pL{1,1000})+' }), 'pattern', /too complex/);
    });

    it('refuses a default its own field refuses', () => {
      refusedAt(field('number', { default: '1e3' }), 'default', /the default is not a number/);
      refusedAt(field('number', { max: 10, default: '11' }), 'default', /more than the maximum 10/);
      refusedAt(field('number', { integer: true, default: '1.5' }), 'default', /whole/);
      refusedAt(field('text', { pattern: '[0-9]+', default: 'abc' }), 'default', /pattern/);
      refusedAt(field('text', { maxLength: 2, default: 'abc' }), 'default', /longer/);
      refusedAt(field('email', { default: 'ann' }), 'default', /email/);
      refusedAt(field('url', { default: 'example.com' }), 'default', /web address/);
      refusedAt(field('date', { default: '2026-02-29' }), 'default', /not a date/);
      refusedAt(field('datetime', { default: '2026-02-28' }), 'default', /date and time/);
      refusedAt(field('select', { options: ['a'], default: 'b' }), 'default', /not one of/);
      refusedAt(field('multi_select', { options: ['a'], default: 'a' }), 'default', /list/);
      refusedAt(
        field('multi_select', { options: ['a'], default: '["a","a"]' }),
        'default',
        /twice/,
      );
      refusedAt(field('checkbox', { default: 'yes' }), 'default', /checkbox/);
    });

    it('refuses an unknown type, and names the field', () => {
      const f = {
        inputId: 'email',
        fieldName: 'E',
        type: 'colour',
      } as unknown as TemplateInputField;
      refusedAt(f, 'type', /^field "email": unknown type "colour"$/);
      expect(valueProblem(f, 'x')).to.match(/unknown type/);
      expect(parseFieldValue(f, 'x')).to.equal(undefined);
    });

    it('escapes the pointer', () => {
      try {
        checkFieldDefinition(field('number', { min: 'x' as unknown as number, max: Infinity }), [
          'a/b',
          'c~d',
        ]);
        expect.fail('expected a refusal');
      } catch (err) {
        expect((err as DomainError).field).to.equal('/a~1b/c~0d/min');
      }
    });
  });

  describe('properties', () => {
    it('round-trips canonical forms of finite numbers', () => {
      const finite = fc.oneof(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
        fc
          .tuple(fc.integer({ min: -1e9, max: 1e9 }), fc.integer({ min: 0, max: 12 }))
          .map(([m, e]) => m / 10 ** e),
      );
      const f = field('number');
      fc.assert(
        fc.property(finite, (n) => {
          const raw = canonical(n);
          // Only forms that fit the documented 40 characters.
          fc.pre(raw.length <= 40);
          expect(parseFieldValue(f, raw), raw).to.deep.equal({
            kind: 'number',
            number: n === 0 ? 0 : n,
          });
          expect(valueProblem(f, raw), raw).to.equal(undefined);
        }),
        { numRuns: 2000 },
      );
    });

    it('reads every string in the number grammar as Number() does', () => {
      const digit = fc.constantFrom(...'0123456789'.split(''));
      const form = fc
        .tuple(
          fc.boolean(),
          fc.oneof(
            fc.constant('0'),
            fc
              .tuple(fc.constantFrom(...'123456789'.split('')), fc.array(digit, { maxLength: 15 }))
              .map(([h, t]) => h + t.join('')),
          ),
          fc.option(fc.array(digit, { minLength: 1, maxLength: 15 })),
        )
        .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac ? `.${frac.join('')}` : ''}`);
      const f = field('number');
      fc.assert(
        fc.property(form, (raw) => {
          const n = Number(raw);
          expect(parseFieldValue(f, raw)).to.deep.equal({
            kind: 'number',
            number: n === 0 ? 0 : n,
          });
        }),
      );
    });

    it('never throws, and parses whatever it accepts', () => {
      const types = fc.constantFrom<FieldType>(
        'text',
        'long_text',
        'number',
        'email',
        'url',
        'date',
        'datetime',
        'select',
        'multi_select',
        'checkbox',
      );
      fc.assert(
        fc.property(types, fc.string({ unit: 'binary' }), (type, raw) => {
          const f = field(type, type.endsWith('select') ? { options: ['a', raw] } : {});
          const problem = valueProblem(f, raw);
          const value = parseFieldValue(f, raw);
          if (problem === undefined)
            expect(value, `${type} ${JSON.stringify(raw)}`).to.not.equal(undefined);
          isEmptyValue(f, raw);
          missingRequired(f, raw);
        }),
        { numRuns: 2000 },
      );
    });
  });
});

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

/** A finite number in the documented form: String(n), its exponent written out. */
function canonical(n: number): string {
  const s = String(n);
  const e = s.indexOf('e');
  if (e < 0) return s;
  const negative = s.startsWith('-');
  const mantissa = s.slice(negative ? 1 : 0, e);
  const exponent = Number(s.slice(e + 1));
  const [int = '', frac = ''] = mantissa.split('.');
  const digits = int + frac;
  // The decimal point sits after `point` digits of `digits`.
  const point = int.length + exponent;
  let out: string;
  if (point <= 0) out = `0.${'0'.repeat(-point)}${digits}`;
  else if (point >= digits.length) out = digits + '0'.repeat(point - digits.length);
  else out = `${digits.slice(0, point)}.${digits.slice(point)}`;
  return (negative ? '-' : '') + out;
}
