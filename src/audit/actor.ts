// Who made a change: an API key (its id and name), the service itself (a worker or the
// reconciler), an operator with the admin CLI on the server, or a schedule (the runs it creates). Run events and audit entries
// carry one, so a history says who did what.
import type { FromSchema } from 'json-schema-to-ts';

/** Embedded (no $id) in the schemas that show an actor: run history, audit entries. */
export const ActorSchema = {
  description:
    'who made the change: an API key (its id and, when it has one, its name), the service itself (system: a worker or the reconciler), an operator with the admin CLI (admin_cli), or a schedule (its id: the runs it creates)',
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: {
        type: { const: 'api_key' },
        id: { type: 'string' },
        name: { type: 'string' },
      },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type'],
      properties: { type: { enum: ['system', 'admin_cli'] } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'id'],
      properties: { type: { const: 'schedule' }, id: { type: 'string' } },
    },
  ],
} as const;

export type Actor = FromSchema<typeof ActorSchema>;

export const SYSTEM: Actor = { type: 'system' };
export const ADMIN_CLI: Actor = { type: 'admin_cli' };
export const scheduleActor = (id: string): Actor => ({ type: 'schedule', id });

/** The actor of a request: the key it came with. */
export function actorOf(principal: { keyId: string; keyName: string | null }): Actor {
  return principal.keyName === null
    ? { type: 'api_key', id: principal.keyId }
    : { type: 'api_key', id: principal.keyId, name: principal.keyName };
}

/**
 * What an actor is filtered by (audit_log.actor_ref): a key's id, or the name of its type for
 * the others.
 */
export function actorRef(actor: Actor): string {
  return actor.type === 'api_key' || actor.type === 'schedule' ? actor.id : actor.type;
}

/** An actor as stored (JSON), and back; a stored value that is not one reads as undefined. */
export function actorJson(actor: Actor): string {
  return JSON.stringify(actor);
}

export function parseActor(json: string | null): Actor | undefined {
  if (json === null) return undefined;
  const value = JSON.parse(json) as Partial<Actor> | null;
  if (value?.type === 'api_key' && typeof value.id === 'string') return value as Actor;
  if (value?.type === 'system' || value?.type === 'admin_cli') return { type: value.type };
  if (value?.type === 'schedule' && typeof value.id === 'string') {
    return { type: 'schedule', id: value.id };
  }
  return undefined;
}
