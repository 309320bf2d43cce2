// Bounded lists: ?limit= and an opaque ?cursor= (their schema is in common-schemas.ts), the
// next page announced in a Link header so the body stays the bare array of the spec. Cursors
// are keyset positions (a seq), never offsets, and every query that uses one is still scoped
// to the caller's organization.
import type { Context } from 'koa';
import { pointer } from '../errors.js';
import { HttpError } from './errors.js';
import type { RouteReply } from './contract.js';

/** A keyset position as a cursor: its JSON in base64url. */
export function encodePosition(position: object): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

/**
 * The position a cursor holds, as `read` takes it from the cursor's JSON (undefined: not one of
 * its positions); anything else, a cursor this service did not make, is a 400 invalid_cursor.
 */
export function decodePosition<P>(cursor: string, read: (parsed: unknown) => P | undefined): P {
  if (cursor.length > 0 && cursor.length <= 200 && /^[A-Za-z0-9_-]+$/.test(cursor)) {
    try {
      const position = read(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
      if (position !== undefined) return position;
    } catch {
      // fall through to the 400 below
    }
  }
  throw new HttpError('invalid_cursor', 'cursor is not valid', {}, pointer('cursor'));
}

export function encodeCursor(seq: number): string {
  return encodePosition({ s: seq });
}

export function decodeCursor(cursor: string): number {
  return decodePosition(cursor, (parsed) => {
    const seq = (parsed as { s?: unknown } | null)?.s;
    return typeof seq === 'number' && Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
  });
}

/**
 * The Link header of the next page: this page's URL with every parameter kept (filters too),
 * its limit, and the cursor moved past the last row sent.
 */
export function nextPageLink(ctx: Context, limit: number, cursor: string): string {
  const params = new URLSearchParams(ctx.querystring);
  params.set('limit', String(limit));
  params.set('cursor', cursor);
  return `<${ctx.path}?${params.toString()}>; rel="next"`;
}

/**
 * One page of a list: `fetch` reads `limit + 1` rows before the cursor's position, so that a
 * further row tells that a next page exists, and the page is answered as sendPage does.
 */
export async function listPage<Row extends { seq: number }, Out>(
  ctx: Context,
  query: { limit?: number; cursor?: string },
  defaultLimit: number,
  fetch: (limit: number, beforeSeq: number | null) => Promise<Row[]>,
  toBody: (row: Row) => Out,
): Promise<RouteReply> {
  const limit = query.limit ?? defaultLimit;
  const beforeSeq = query.cursor === undefined ? null : decodeCursor(query.cursor);
  return sendPage(ctx, limit, await fetch(limit + 1, beforeSeq), toBody);
}

/**
 * One page: rows were fetched with limit + 1 so a further row tells that a next page exists.
 * The next page's URL keeps every parameter of this one (filters too) with the cursor moved
 * past the last row sent.
 */
function sendPage<Row extends { seq: number }, Out>(
  ctx: Context,
  limit: number,
  rows: Row[],
  toBody: (row: Row) => Out,
): RouteReply {
  const visible = rows.slice(0, limit);
  const last = visible[visible.length - 1];
  const headers: Record<string, string> = {};
  if (rows.length > limit && last) headers.Link = nextPageLink(ctx, limit, encodeCursor(last.seq));
  return { status: 200, body: visible.map(toBody), headers };
}
