// What an API key may do. Each route names the one scope it needs in its contract
// (http/contract.ts), so a route cannot be added without one; a key holds a set of them.
// Scopes are written domain:action, as Windmill's tokens spell them.

export const SCOPES = {
  'runs:read': 'list runs and read one in full',
  'runs:write': 'create runs, complete steps, cancel and retry runs',
  'templates:read': 'list templates and read one, with its versions',
  'templates:write': 'create templates, save new versions, archive and restore',
  'schedules:read': 'list schedules and read one, with its history',
  'schedules:write': 'create, change, pause, resume, trigger, backfill and delete schedules',
  'webhooks:read': 'list webhook endpoints and the delivery log',
  'webhooks:write': 'subscribe and delete endpoints, rotate secrets, redeliver',
  'keys:manage': 'create, list, revoke and roll API keys',
  'audit:read': 'read the audit log',
} as const;

export type Scope = keyof typeof SCOPES;

/** Every scope, in the order above: what keys made by the admin CLI (and older keys) hold. */
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];

export function isScope(value: string): value is Scope {
  return Object.hasOwn(SCOPES, value);
}

/**
 * The scopes a stored key holds: its JSON array, with any name this build does not know left
 * out (a key written by a newer build keeps working with what this one knows).
 */
export function parseScopes(json: string | null): Scope[] {
  if (json === null) return [];
  const parsed: unknown = JSON.parse(json);
  return Array.isArray(parsed)
    ? parsed.filter((s): s is Scope => typeof s === 'string' && isScope(s))
    : [];
}
