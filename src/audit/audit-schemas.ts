// The audit log's schemas: the list's query and one entry, whose data is described per type
// (from AUDIT_EVENT_DATA), so a strict client can parse every entry it is given.
import type { FromSchema } from 'json-schema-to-ts';
import type { Config } from '../config.js';
import { pageQueryProperties } from '../http/common-schemas.js';
import { ActorSchema } from './actor.js';
import { AUDIT_EVENT_DATA, AUDIT_EVENT_TYPES, type AuditEventType } from './audit-events.js';

const dateTime = { type: 'string', format: 'date-time' } as const;

/** One entry of one type: its `type` is that type, its `data` that type's data. */
const entryOf = <const T extends AuditEventType>(type: T) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['id', 'type', 'at', 'actor', 'targetId', 'data'],
    properties: {
      id: { type: 'string' },
      type: { type: 'string', const: type },
      at: { ...dateTime, description: 'when the change was made' },
      actor: ActorSchema,
      targetId: {
        type: 'string',
        description:
          'the id of what changed: a template, an API key, a webhook endpoint, a bulk action, the organization',
      },
      data: AUDIT_EVENT_DATA[type],
    },
  }) as const;

export const AuditEntrySchema = {
  $id: 'AuditEntry',
  description:
    'one administrative change, written in the same transaction as the change; never a secret',
  oneOf: [
    entryOf('template.created'),
    entryOf('template.updated'),
    entryOf('template.archived'),
    entryOf('template.restored'),
    entryOf('api_key.created'),
    entryOf('api_key.revoked'),
    entryOf('api_key.rolled'),
    entryOf('api_key.expired'),
    entryOf('webhook_endpoint.created'),
    entryOf('webhook_endpoint.deleted'),
    entryOf('webhook_endpoint.secret_rotated'),
    entryOf('bulk_action.created'),
    entryOf('schedule.created'),
    entryOf('schedule.updated'),
    entryOf('schedule.paused'),
    entryOf('schedule.resumed'),
    entryOf('schedule.deleted'),
    entryOf('schedule.triggered'),
    entryOf('schedule.backfilled'),
    entryOf('organization.settings_updated'),
  ],
} as const;

// A type of entry left out of the oneOf above does not compile.
type Listed = (typeof AuditEntrySchema.oneOf)[number]['properties']['type']['const'];
const everyTypeListed: Record<AuditEventType, true> = {} as Record<Listed, true>;
void everyTypeListed;

export type AuditEntryView = FromSchema<typeof AuditEntrySchema>;

/** Both the `type` filter's pattern and its description name every type. */
const typeAlternatives = AUDIT_EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|');

export function auditSchemas(limits: Pick<Config, 'listDefaultLimit' | 'listMaxLimit'>) {
  return {
    listQuery: {
      $id: 'GetAuditLogQuery',
      type: 'object',
      additionalProperties: false,
      properties: {
        ...pageQueryProperties(limits),
        type: {
          type: 'string',
          pattern: `^(${typeAlternatives})(,(${typeAlternatives}))*$`,
          description: `one or several of ${AUDIT_EVENT_TYPES.join(', ')}, comma-separated`,
        },
        actor: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          description: "who made the change: an API key's id, or system, or admin_cli",
        },
        after: { ...dateTime, description: 'entries made after this time' },
        before: { ...dateTime, description: 'entries made before this time' },
      },
    },
  } as const;
}

export type AuditLogQuery = FromSchema<ReturnType<typeof auditSchemas>['listQuery']>;
