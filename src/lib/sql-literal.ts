// SQL literals for statements the service writes itself (the multi-row INSERT of new runs, the
// tables of values its batch UPDATEs join), instead of `?` placeholders that the driver fills
// in by scanning the statement text and escaping every value: on the create path that scan
// cost more CPU than the insert's round trip. Strings are single-quoted, so only the quote, the backslash and the
// characters MySQL's own escaping guards (NUL, CR, LF, Ctrl-Z) need a backslash; a JSON
// document usually has none of them and is passed through as it is.

// eslint-disable-next-line no-control-regex -- NUL and Ctrl-Z are among what MySQL escapes
const NEEDS_ESCAPE = /[\0\n\r\x1a'\\]/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROL = /[\0\n\r\x1a]/;
// eslint-disable-next-line no-control-regex -- as above
const CONTROLS = /[\0\n\r\x1a]/g;
const REPLACEMENTS: Record<string, string> = {
  '\0': '\\0',
  '\n': '\\n',
  '\r': '\\r',
  '\x1a': '\\Z',
};

export type SqlValue = string | number | Date | null;

function quote(text: string): string {
  if (!NEEDS_ESCAPE.test(text)) return `'${text}'`;
  // One native pass per kind of character, backslashes first: JSON nested in JSON (a batch of
  // documents) has a backslash before every quote, and a replace that calls back per match
  // cost a worker more than the rest of building its statements.
  let escaped = text.includes('\\') ? text.replaceAll('\\', '\\\\') : text;
  if (escaped.includes("'")) escaped = escaped.replaceAll("'", "\\'");
  if (CONTROL.test(escaped)) escaped = escaped.replace(CONTROLS, (c) => REPLACEMENTS[c]!);
  return `'${escaped}'`;
}

/** A literal for a string, a finite number, NULL, or a Date as a UTC DATETIME(3). */
export function sqlLiteral(value: SqlValue): string {
  if (value === null) return 'NULL';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`cannot write ${value} to SQL`);
    return String(value);
  }
  const time = value.getTime();
  if (!Number.isFinite(time)) throw new TypeError('cannot write an invalid Date to SQL');
  // The connection's time zone is UTC ('Z'), as for every date the driver writes.
  return `'${value.toISOString().slice(0, 23).replace('T', ' ')}'`;
}

/** A row of literals, `(literal, …)`: one row of a multi-row INSERT or of a table of values. */
export function sqlRow(values: readonly SqlValue[]): string {
  return `(${values.map(sqlLiteral).join(', ')})`;
}

/**
 * A table of values for a statement to join: a header row that names the columns (all NULL,
 * so it joins no row), then one row per element, each `(literal, …)` in the columns' order.
 * MariaDB's table value constructor: plain literals, which it reads far faster than the same
 * values as a JSON document for JSON_TABLE (a run document nested in JSON cost it twice as
 * much to unpack).
 */
export function valuesTable(columns: readonly string[], rows: readonly string[]): string {
  const header = columns.map((column) => `NULL AS ${column}`).join(', ');
  return `(SELECT ${header} UNION ALL VALUES ${rows.join(', ')})`;
}
