// Schemas every route shares: the error body and the page parameters of a list.
import type { Config } from '../config.js';
import { ERRORS, GENERAL_ERROR_CODES, type ErrorCode } from './errors.js';

/** The Error of the spec, with the service's stable machine-readable code (and field) beside it. */
export const ErrorSchema = {
  $id: 'Error',
  type: 'object',
  description: 'Every error body. `code` is a stable machine-readable name of the error.',
  additionalProperties: false,
  required: ['message', 'code'],
  properties: {
    message: { type: 'string', description: 'what went wrong, for a person' },
    code: {
      type: 'string',
      // Every code the service can answer with, so a client generated from the document types
      // `code` as their union (a code is added with a new document, never sent before it).
      enum: (Object.keys(ERRORS) as ErrorCode[]).sort(),
      description:
        'what went wrong, for a program. Each operation lists the codes it can answer with, ' +
        'under each error status; any request may also meet ' +
        GENERAL_ERROR_CODES.map((code) => `${code} (${ERRORS[code].status})`).join(', '),
      example: 'step_not_current',
    },
    field: {
      type: 'string',
      description: 'the request field at fault, as a JSON Pointer, when there is one',
      example: '/input_fields/email',
    },
  },
} as const;

/** Base64url, as cursors are written. */
export const CURSOR_PATTERN = '^[A-Za-z0-9_-]{1,200}$';

/** ?limit= and ?cursor= of every list. */
export function pageQueryProperties(limits: Pick<Config, 'listDefaultLimit' | 'listMaxLimit'>) {
  return {
    limit: {
      type: 'integer',
      minimum: 1,
      maximum: limits.listMaxLimit,
      description: `page size (default ${limits.listDefaultLimit})`,
    },
    cursor: {
      type: 'string',
      pattern: CURSOR_PATTERN,
      description: 'the position after which the page starts, from the Link rel="next" header',
    },
  } as const;
}
