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
