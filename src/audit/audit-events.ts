// The audit log's vocabulary: every administrative change (templates, API keys, webhook
// endpoints, the organization's settings) is one entry, written in the same transaction as the change itself, so an entry
// exists only if its change was committed and every committed change has its entry. Changes
// to runs are not here: each run's history (run-events.ts) records them, with their actor.
//
// Closed as the run events are: each type has its own data, described once below as a JSON
// Schema from which its TypeScript type is derived. No entry ever holds a secret or its hash.
import type { FromSchema } from 'json-schema-to-ts';
import { data, text, time } from '../lib/event-data-schema.js';
import type { Actor } from './actor.js';

export const AUDIT_EVENT_TYPES = [
  'template.created',
  'template.updated',
  'template.archived',
  'template.restored',
  'api_key.created',
  'api_key.revoked',
  'api_key.rolled',
  'api_key.expired',
  'webhook_endpoint.created',
  'webhook_endpoint.deleted',
  'webhook_endpoint.secret_rotated',
  'bulk_action.created',
  'schedule.created',
  'schedule.updated',
  'schedule.paused',
  'schedule.resumed',
  'schedule.deleted',
  'schedule.triggered',
  'schedule.backfilled',
  'organization.settings_updated',
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

const int = { type: 'integer' } as const;
const strings = { type: 'array', items: text } as const;

/** What each type of entry says, in camelCase; its subject's id is the entry's targetId. */
export const AUDIT_EVENT_DATA = {
  'template.created': data('a template was created, as version 1', { name: text, version: int }, [
    'name',
    'version',
  ]),
  'template.updated': data(
    'a new version of the template was saved',
    { name: text, version: int },
    ['name', 'version'],
  ),
  'template.archived': data('the template was archived: it takes no new runs', {}, []),
  'template.restored': data('the template was restored: it takes new runs again', {}, []),
  'api_key.created': data(
    'a key was created (its secret is never recorded)',
    { name: text, prefix: text, scopes: strings, expiresAt: time },
    ['prefix', 'scopes'],
  ),
  'api_key.revoked': data('the key was revoked', { prefix: text }, ['prefix']),
  'api_key.rolled': data(
    'the key was replaced by a new one; it keeps working until expiresAt',
    { prefix: text, newKeyId: text, newPrefix: text, expiresAt: time },
    ['prefix', 'newKeyId', 'newPrefix', 'expiresAt'],
  ),
  'api_key.expired': data(
    'the key passed its expiry and is refused since',
    { prefix: text, expiresAt: time },
    ['prefix', 'expiresAt'],
  ),
  'webhook_endpoint.created': data(
    'a webhook endpoint was subscribed',
    { url: text, events: strings },
    ['url'],
  ),
  'webhook_endpoint.deleted': data(
    'the endpoint was deleted, with its delivery log',
    { url: text },
    ['url'],
  ),
  'webhook_endpoint.secret_rotated': data(
    'the signing secret was replaced; the old one signs beside it until previousSecretExpiresAt',
    { previousSecretExpiresAt: time },
    ['previousSecretExpiresAt'],
  ),
  'bulk_action.created': data(
    'a bulk cancel, retry or migration of the runs matching a filter was started (each run changed is in its history)',
    {
      action: { type: 'string', enum: ['cancel', 'retry', 'migrate'] },
      filter: { type: 'object', description: 'the filter as given' },
      reason: text,
      migration: {
        type: 'object',
        description:
          "a migration's plan: fromVersion, toVersion, pageMap, dropIncompatible, dryRun",
      },
    },
    ['action', 'filter'],
  ),
  'schedule.created': data(
    'a schedule was created: its template and cadence',
    { templateId: text, cron: text, intervalSeconds: int, timeZone: text, state: text },
    ['templateId', 'timeZone', 'state'],
  ),
  'schedule.updated': data(
    'a schedule was changed: the fields given, as they now are',
    { changed: strings },
    ['changed'],
  ),
  'schedule.paused': data('a schedule was paused, with the note given', { note: text }, []),
  'schedule.resumed': data(
    'a schedule was resumed, with the note given; the times it passed while paused are skipped',
    { note: text, skippedWhilePaused: int },
    [],
  ),
  'schedule.deleted': data('a schedule was deleted (its history and runs are kept)', {}, []),
  'schedule.triggered': data(
    'a run was asked for now, outside the cadence',
    { scheduledFor: time, outcome: text, runId: text },
    ['scheduledFor', 'outcome'],
  ),
  'schedule.backfilled': data(
    'runs were asked for the scheduled times of a range',
    { from: time, to: time, times: int, fired: int },
    ['from', 'to', 'times', 'fired'],
  ),
  'organization.settings_updated': data(
    "the organization's settings were changed, all of them as they now are; a setting left out is its default (the operator's retention, the time zone UTC)",
    { runRetentionDays: int, timeZone: text },
    [],
  ),
} as const satisfies Record<AuditEventType, { type: 'object' }>;

export type AuditEventData<T extends AuditEventType> = FromSchema<(typeof AUDIT_EVENT_DATA)[T]>;

/** An entry as a change makes it: written by insertAuditEntries in the change's transaction. */
export type NewAuditEntry = {
  [K in AuditEventType]: {
    organizationId: string;
    type: K;
    actor: Actor;
    /** The id of what changed: a template, a key, an endpoint. */
    targetId: string;
    data: AuditEventData<K>;
    at: Date;
  };
}[AuditEventType];
