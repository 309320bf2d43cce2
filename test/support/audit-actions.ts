// Administrative actions for AuditLedger (audit.ts), each with the entry it must leave. Actions
// refer to what they change by a name the test picks ('a', 'b'), remembered in `ids` when the
// action that makes it runs, so a list of actions reads as a script. Add a family here (the
// template and key endpoints) and a ledger test takes its actions in a few lines.
import { expect } from 'chai';
import { ADMIN_CLI, type Actor } from '../../src/audit/actor.js';
import type { AuditedAction } from './audit.js';
import type { Client } from './http.js';
import { runAdmin } from './processes.js';

/** What each name given to an action stands for: the id of what it made. */
export type Ids = Map<string, string>;

const idOf = (ids: Ids, name: string): string => {
  const id = ids.get(name);
  if (id === undefined) throw new Error(`no '${name}' was made before this action`);
  return id;
};

/** The actor of the changes a key makes: its id and name. */
export function keyActor(keyId: string, name: string): Actor {
  return { type: 'api_key', id: keyId, name };
}

type Json = Record<string, unknown>;

/** The webhook endpoint actions over the API, made with `client`, whose key is `actor`. */
export function webhookApiActions(client: Client, actor: Actor, ids: Ids) {
  const post = async (path: string, body: Json, status = 200) => {
    const reply = await client.call<Json>(path, body);
    expect(reply.status, `${path}: ${reply.text}`).to.equal(status);
    return reply.body;
  };
  return {
    create(name: string, url: string, events?: string[]): AuditedAction {
      return {
        name: `API create-webhook-endpoint ${name}`,
        async run() {
          const made = await post('/create-webhook-endpoint', {
            url,
            ...(events ? { events } : {}),
          });
          ids.set(name, made.id as string);
          return {
            type: 'webhook_endpoint.created',
            actor,
            targetId: made.id as string,
            data: { url, ...(events ? { events } : {}) },
          };
        },
      };
    },
    rotate(name: string): AuditedAction {
      return {
        name: `API rotate-webhook-secret ${name}`,
        async run() {
          const rotated = await post('/rotate-webhook-secret', { id: idOf(ids, name) });
          return {
            type: 'webhook_endpoint.secret_rotated',
            actor,
            targetId: idOf(ids, name),
            data: { previousSecretExpiresAt: rotated.previousSecretExpiresAt },
          };
        },
      };
    },
    delete(name: string, url: string): AuditedAction {
      return {
        name: `API delete-webhook-endpoint ${name}`,
        async run() {
          await post('/delete-webhook-endpoint', { id: idOf(ids, name) });
          return {
            type: 'webhook_endpoint.deleted',
            actor,
            targetId: idOf(ids, name),
            data: { url },
          };
        },
      };
    },
    /** A request refused with `status`: it must leave no entry. */
    refused(path: string, body: Json, status: number): AuditedAction {
      return {
        name: `API ${path} refused with ${status}`,
        async run() {
          await post(path, body, status);
          return undefined;
        },
      };
    },
    /** A request sent again with its Idempotency-Key: answered again, nothing done again. */
    replayed(path: string, body: Json, idempotencyKey: string): AuditedAction {
      return {
        name: `API ${path} replayed`,
        async run() {
          const reply = await client.call<Json>(path, body, { 'Idempotency-Key': idempotencyKey });
          expect(reply.status, reply.text).to.equal(200);
          expect(reply.headers.get('idempotent-replayed')).to.equal('true');
          return undefined;
        },
      };
    },
  };
}

/** The same actions with the admin CLI, for an organization the operator names. */
export function webhookCliActions(organizationId: string, ids: Ids) {
  const admin = async (args: string[], code = 0) => {
    const res = await runAdmin([...args, '--org', organizationId]);
    expect(res.code, `${args.join(' ')}: ${res.stderr}`).to.equal(code);
    return code === 0 ? (JSON.parse(res.stdout) as Json) : undefined;
  };
  return {
    create(name: string, url: string): AuditedAction {
      return {
        name: `CLI create-webhook-endpoint ${name}`,
        async run() {
          const made = (await admin(['create-webhook-endpoint', '--url', url]))!;
          ids.set(name, made.id as string);
          return {
            type: 'webhook_endpoint.created',
            actor: ADMIN_CLI,
            targetId: made.id as string,
            data: { url },
          };
        },
      };
    },
    rotate(name: string): AuditedAction {
      return {
        name: `CLI rotate-webhook-secret ${name}`,
        async run() {
          const rotated = (await admin(['rotate-webhook-secret', '--id', idOf(ids, name)]))!;
          return {
            type: 'webhook_endpoint.secret_rotated',
            actor: ADMIN_CLI,
            targetId: idOf(ids, name),
            data: { previousSecretExpiresAt: rotated.previousSecretExpiresAt },
          };
        },
      };
    },
    delete(name: string, url: string): AuditedAction {
      return {
        name: `CLI delete-webhook-endpoint ${name}`,
        async run() {
          await admin(['delete-webhook-endpoint', '--id', idOf(ids, name)]);
          return {
            type: 'webhook_endpoint.deleted',
            actor: ADMIN_CLI,
            targetId: idOf(ids, name),
            data: { url },
          };
        },
      };
    },
    /** A command refused (exit 2): it must leave no entry. */
    refused(args: string[]): AuditedAction {
      return {
        name: `CLI ${args.join(' ')} refused`,
        async run() {
          await admin(args, 2);
          return undefined;
        },
      };
    },
  };
}

/** A POST that must answer `status`; its body. */
function poster(client: Client) {
  return async (path: string, body: Json, status = 200): Promise<Json> => {
    const reply = await client.call<Json>(path, body);
    expect(reply.status, `${path}: ${reply.text}`).to.equal(status);
    return reply.body;
  };
}

/** A one-page template definition named `name`. */
export function templateDefinition(name: string, pageName = 'Page'): Json {
  return { name, pages: [{ name: pageName, inputFields: [{ inputId: 'x', fieldName: 'X' }] }] };
}

/** The template actions over the API, made with `client`, whose key is `actor`. */
export function templateApiActions(client: Client, actor: Actor, ids: Ids) {
  const post = poster(client);
  return {
    create(name: string): AuditedAction {
      return {
        name: `API create-workflow-template ${name}`,
        async run() {
          const made = await post('/create-workflow-template', templateDefinition(name));
          ids.set(name, made.id as string);
          return {
            type: 'template.created',
            actor,
            targetId: made.id as string,
            data: { name, version: 1 },
          };
        },
      };
    },
    /** Saves version expectedVersion + 1 under a new name. */
    update(name: string, expectedVersion: number, newName: string): AuditedAction {
      return {
        name: `API update-workflow-template ${name} from v${expectedVersion}`,
        async run() {
          await post('/update-workflow-template', {
            id: idOf(ids, name),
            expected_version: expectedVersion,
            ...templateDefinition(newName, 'Other page'),
          });
          return {
            type: 'template.updated',
            actor,
            targetId: idOf(ids, name),
            data: { name: newName, version: expectedVersion + 1 },
          };
        },
      };
    },
    /** Archives or restores; an entry only when the state changed. */
    setArchived(name: string, archived: boolean, changes = true): AuditedAction {
      const path = archived ? '/archive-workflow-template' : '/restore-workflow-template';
      return {
        name: `API ${path} ${name}${changes ? '' : ' (no change)'}`,
        async run() {
          await post(path, { id: idOf(ids, name) });
          if (!changes) return undefined;
          return {
            type: archived ? 'template.archived' : 'template.restored',
            actor,
            targetId: idOf(ids, name),
            data: {},
          };
        },
      };
    },
  };
}

/** The API key actions over the API, made with `client`, whose key is `actor`. */
export function keyApiActions(client: Client, actor: Actor, ids: Ids) {
  const post = poster(client);
  /** The prefix of each key made, by name. */
  const prefixes = new Map<string, string>();
  return {
    create(name: string, scopes: string[]): AuditedAction {
      return {
        name: `API create-api-key ${name}`,
        async run() {
          const made = await post('/create-api-key', { name, scopes });
          ids.set(name, made.id as string);
          prefixes.set(name, made.prefix as string);
          return {
            type: 'api_key.created',
            actor,
            targetId: made.id as string,
            data: { name, prefix: made.prefix, scopes },
          };
        },
      };
    },
    revoke(name: string): AuditedAction {
      return {
        name: `API revoke-api-key ${name}`,
        async run() {
          await post('/revoke-api-key', { id: idOf(ids, name) });
          return {
            type: 'api_key.revoked',
            actor,
            targetId: idOf(ids, name),
            data: { prefix: prefixes.get(name) },
          };
        },
      };
    },
    /** Rolls key `name` (made with `scopes`) into `newName`: two entries, old then new. */
    roll(name: string, newName: string, scopes: string[]): AuditedAction {
      return {
        name: `API roll-api-key ${name}`,
        async run() {
          const made = await post('/roll-api-key', { id: idOf(ids, name), overlap_hours: 1 });
          ids.set(newName, made.id as string);
          prefixes.set(newName, made.prefix as string);
          const old = (await client.call<Json[]>('/get-api-keys?limit=100')).body.find(
            (key) => key.id === idOf(ids, name),
          )!;
          return [
            {
              type: 'api_key.rolled',
              actor,
              targetId: idOf(ids, name),
              data: {
                prefix: prefixes.get(name),
                newKeyId: made.id,
                newPrefix: made.prefix,
                expiresAt: old.expiresAt,
              },
            },
            {
              type: 'api_key.created',
              actor,
              targetId: made.id as string,
              data: { name: made.name, prefix: made.prefix, scopes },
            },
          ];
        },
      };
    },
  };
}
