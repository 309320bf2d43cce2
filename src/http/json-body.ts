// Reads a JSON request body with a hard size limit. The body must be a JSON object.
import type { Middleware } from 'koa';
import { HttpError, badRequest, payloadTooLarge, unsupportedMediaType } from '../errors.js';
import type { AppState } from './context.js';

export function jsonBody(limitBytes: number): Middleware<AppState> {
  return async (ctx, next) => {
    if (!ctx.request.is('application/json', '+json')) throw unsupportedMediaType();
    const encoding = ctx.get('content-encoding');
    if (encoding && encoding.toLowerCase() !== 'identity') {
      throw new HttpError(415, 'unsupported_media_type', 'Content-Encoding is not supported');
    }
    const declared = ctx.request.length;
    if (declared !== undefined && declared > limitBytes) {
      ctx.set('Connection', 'close');
      throw payloadTooLarge(limitBytes);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req) {
      size += (chunk as Buffer).length;
      if (size > limitBytes) {
        ctx.set('Connection', 'close');
        throw payloadTooLarge(limitBytes);
      }
      chunks.push(chunk as Buffer);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.concat(chunks, size).toString('utf8'));
    } catch {
      // Also catches RangeError from absurdly deep nesting.
      throw badRequest('request body is not valid JSON', 'invalid_json');
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw badRequest('request body must be a JSON object', 'invalid_body');
    }
    ctx.state.body = parsed;
    await next();
  };
}
