// Bounded lists: ?limit= and an opaque ?cursor=, the next page announced in a Link header so
// the body stays the bare array of the spec. Cursors are keyset positions (a seq), never
// offsets, and every query that uses one is still scoped to the caller's organization.
import type { Context } from 'koa';
import { badRequest } from '../errors.js';

export interface PageRequest {
  limit: number;
  beforeSeq: number | null;
}

function single(value: string | string[] | undefined, name: string): string | undefined {
  if (Array.isArray(value)) throw badRequest(`${name} may be given only once`, 'invalid_query');
  return value;
}

export function encodeCursor(seq: number): string {
  return Buffer.from(JSON.stringify({ s: seq })).toString('base64url');
}

export function decodeCursor(cursor: string): number {
  if (cursor.length === 0 || cursor.length > 200 || !/^[A-Za-z0-9_-]+$/.test(cursor)) {
    throw badRequest('cursor is not valid', 'invalid_cursor');
  }
  try {
    const parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    const seq = (parsed as { s?: unknown } | null)?.s;
    if (typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0) return seq;
  } catch {
    // fall through to the 400 below
  }
  throw badRequest('cursor is not valid', 'invalid_cursor');
}

const ALLOWED = new Set(['limit', 'cursor']);

export function parsePageRequest(
  query: Context['query'],
  defaultLimit: number,
  maxLimit: number,
): PageRequest {
  for (const key of Object.keys(query)) {
    if (!ALLOWED.has(key)) throw badRequest(`unknown query parameter '${key}'`, 'invalid_query');
  }
  const rawLimit = single(query.limit, 'limit');
  let limit = defaultLimit;
  if (rawLimit !== undefined) {
    if (!/^\d{1,6}$/.test(rawLimit) || Number(rawLimit) < 1 || Number(rawLimit) > maxLimit) {
      throw badRequest(`limit must be an integer from 1 to ${maxLimit}`, 'invalid_limit');
    }
    limit = Number(rawLimit);
  }
  const rawCursor = single(query.cursor, 'cursor');
  return { limit, beforeSeq: rawCursor === undefined ? null : decodeCursor(rawCursor) };
}

/**
 * Sends one page: rows were fetched with limit + 1 so a further row tells that a next page
 * exists; its cursor points after the last row sent.
 */
export function sendPage<Row extends { seq: number }, Out>(
  ctx: Context,
  page: PageRequest,
  rows: Row[],
  toBody: (row: Row) => Out,
): void {
  const visible = rows.slice(0, page.limit);
  const last = visible[visible.length - 1];
  if (rows.length > page.limit && last) {
    const params = new URLSearchParams({
      limit: String(page.limit),
      cursor: encodeCursor(last.seq),
    });
    ctx.set('Link', `<${ctx.path}?${params.toString()}>; rel="next"`);
  }
  ctx.body = visible.map(toBody);
}
