// Labels: up to 16 key/value pairs a run is created with, kept in its document (run_json.labels)
// and, one row per label, in run_labels, the index a label-filtered list scans. This module holds
// their rules (the schemas of the create body and of the list's `label=key:value`), the parsing
// of a filter's labels, and the one statement that writes a batch of new runs' labels.
import { sqlLiteral } from '../lib/sql-literal.js';
import type { RunRecord } from './run-record.js';

export const MAX_LABELS = 16;
export const LABEL_KEY_PATTERN = '^[a-z0-9_.-]{1,63}$';
export const MAX_LABEL_VALUE = 255;

/** `labels` of the create body. */
export const LABELS_SCHEMA = {
  type: 'object',
  maxProperties: MAX_LABELS,
  propertyNames: {
    type: 'string',
    pattern: LABEL_KEY_PATTERN,
    description: 'a label key is 1 to 63 of a-z, 0-9, _, . and -',
  },
  additionalProperties: { type: 'string', maxLength: MAX_LABEL_VALUE },
  description: `up to ${MAX_LABELS} labels: key ([a-z0-9_.-]{1,63}) → value (at most ${MAX_LABEL_VALUE} characters)`,
} as const;

/** One `label=key:value` of a filter (the list's query, a bulk action's filter). */
export const LABEL_FILTER_SCHEMA = {
  type: 'array',
  minItems: 1,
  maxItems: MAX_LABELS,
  items: {
    type: 'string',
    pattern: `^[a-z0-9_.-]{1,63}:[\\s\\S]{0,${MAX_LABEL_VALUE}}$`,
    description: 'key:value, the key [a-z0-9_.-]{1,63}, the value at most 255 characters',
  },
  description: 'runs with this label (key:value); repeat it for several, all of which must match',
} as const;

export interface LabelMatch {
  key: string;
  value: string;
}

/**
 * The labels of a filter, from its `key:value` strings as LABEL_FILTER_SCHEMA checked them (a
 * key holds no colon, so the first one ends it); duplicates dropped.
 */
export function parseLabelFilter(labels: readonly string[] | undefined): LabelMatch[] | undefined {
  if (!labels || labels.length === 0) return undefined;
  const seen = new Map<string, LabelMatch>();
  for (const text of labels) {
    const colon = text.indexOf(':');
    const match = { key: text.slice(0, colon), value: text.slice(colon + 1) };
    seen.set(`${match.key}\u0000${match.value}`, match);
  }
  return [...seen.values()];
}

/**
 * The INSERT of new runs' labels, in the transaction that inserts the runs: each label row
 * takes its run's seq from the row just inserted (a lookup by the run's unique id), so the
 * batch stays one round trip. Undefined when no run has a label: creates without labels cost
 * nothing more.
 */
export function insertLabelsSql(runs: readonly RunRecord[]): string | undefined {
  const selects: string[] = [];
  for (const run of runs) {
    const labels = run.document.labels;
    if (!labels) continue;
    for (const [key, value] of Object.entries(labels)) {
      selects.push(
        `SELECT organization_id, ${sqlLiteral(key)}, ${sqlLiteral(value)}, seq, id ` +
          `FROM workflow_runs WHERE id = ${sqlLiteral(run.id)}`,
      );
    }
  }
  if (selects.length === 0) return undefined;
  return (
    'INSERT INTO run_labels (organization_id, label_key, label_value, run_seq, run_id) ' +
    selects.join(' UNION ALL ')
  );
}
