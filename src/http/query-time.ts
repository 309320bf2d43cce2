// A date-time query parameter (a list's created_after, an audit log's before): the schema
// checks its form, this its value, so "2026-02-30T00:00:00Z" is a 400 naming it, never NaN.
import { DomainError, pointer } from '../errors.js';

export function queryTime(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new DomainError('invalid_query', `${name} is not a valid date-time`, pointer(name));
  }
  return date;
}
