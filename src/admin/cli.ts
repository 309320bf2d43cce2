// The operators' command line: each command prints one JSON object on stdout, or a message on
// stderr and a non-zero exit status.
//   create-org --name NAME
//   create-api-key --org ORG_ID [--name NAME] [--scopes SCOPE,SCOPE] [--expires-at TIME]
//   revoke-api-key --id KEY_ID
//   import-template --org ORG_ID --file PATH [--id TEMPLATE_ID]
//   create-webhook-endpoint --org ORG_ID --url URL [--events TYPE,TYPE] [--description TEXT]
//   list-webhook-endpoints --org ORG_ID
//   delete-webhook-endpoint --org ORG_ID --id ENDPOINT_ID
//   rotate-webhook-secret --org ORG_ID --id ENDPOINT_ID
//   migrate
//   seed-demo
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ADMIN_CLI } from '../audit/actor.js';
import { KeyStore } from '../auth/key-store.js';
import { ALL_SCOPES, isScope, type Scope } from '../auth/scopes.js';
import { ConfigError, loadConfig, type Config } from '../config.js';
import { DomainError } from '../errors.js';
import { NO_DEADLINE } from '../lib/deadline.js';
import { RUN_EVENT_TYPES, type RunEventType } from '../runs/run-events.js';
import { DeliveryLogStore } from '../webhooks/delivery-log-store.js';
import { EndpointStore } from '../webhooks/endpoint-store.js';
import { WebhookService } from '../webhooks/webhook-service.js';
import { createDb, type Db } from '../db.js';
import { migrate } from '../migrate.js';
import { createOrganization, organizationExists } from '../organizations.js';
import { parseTemplateDefinition } from '../templates/definition/template-definition.js';
import { TemplateService } from '../templates/template-service.js';
import { TemplateStore } from '../templates/template-store.js';
import { DEMO_TEMPLATE } from './demo-template.js';

class UsageError extends Error {}

const USAGE = `usage: admin <command> [options]
  create-org --name NAME
  create-api-key --org ORG_ID [--name NAME] [--scopes SCOPE,SCOPE] [--expires-at TIME]
  revoke-api-key --id KEY_ID
  import-template --org ORG_ID --file PATH [--id TEMPLATE_ID]
  create-webhook-endpoint --org ORG_ID --url URL [--events TYPE,TYPE] [--description TEXT]
  list-webhook-endpoints --org ORG_ID
  delete-webhook-endpoint --org ORG_ID --id ENDPOINT_ID
  rotate-webhook-secret --org ORG_ID --id ENDPOINT_ID
  migrate
  seed-demo`;

function required(values: Record<string, string | undefined>, name: string): string {
  const value = values[name];
  if (value === undefined || value.trim() === '') throw new UsageError(`--${name} is required`);
  return value;
}

async function requireOrg(db: Db, id: string): Promise<void> {
  if (!(await organizationExists(db, id))) throw new UsageError(`organization ${id} not found`);
}

/**
 * A template file as a new template or, with an id, as a new version of that template (saved
 * from its current latest version): the same checks, limits and audit entries as the API's,
 * by the admin CLI.
 */
async function importTemplate(db: Db, config: Config, org: string, file: string, id?: string) {
  await requireOrg(db, org);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`);
  }
  const service = new TemplateService(new TemplateStore(db, config.writeTimeoutMs));
  const caller = { organizationId: org, actor: ADMIN_CLI };
  try {
    const definition = parseTemplateDefinition(json);
    const template =
      id === undefined
        ? await service.create(caller, definition)
        : await service.update(caller, {
            id,
            expected_version: await service.latestVersion(caller, id),
            ...definition,
          });
    return {
      id: template.id,
      version: template.version,
      name: template.name,
      organization_id: org,
      pages: template.pages.length,
    };
  } catch (err) {
    if (err instanceof DomainError) {
      throw new UsageError(
        `invalid template: ${err.message}${err.field ? ` (at ${err.field})` : ''}`,
      );
    }
    throw err;
  }
}

/** --scopes a,b: every scope when left out (as keys made by the CLI always held). */
function scopesOption(raw: string | undefined): Scope[] | undefined {
  if (raw === undefined) return undefined;
  const scopes = raw.split(',').map((s) => s.trim());
  const unknown = scopes.find((s) => !isScope(s));
  if (unknown !== undefined) {
    throw new UsageError(`unknown scope '${unknown}'; one of ${ALL_SCOPES.join(', ')}`);
  }
  return scopes as Scope[];
}

/** --expires-at: an ISO 8601 time in the future. */
function expiresAtOption(raw: string | undefined): Date | undefined {
  if (raw === undefined) return undefined;
  const at = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(at.getTime())) {
    throw new UsageError(`--expires-at must be an ISO 8601 time, got '${raw}'`);
  }
  if (at.getTime() <= Date.now()) throw new UsageError('--expires-at must be in the future');
  return at;
}

const WEBHOOK_COMMANDS = [
  'create-webhook-endpoint',
  'list-webhook-endpoints',
  'delete-webhook-endpoint',
  'rotate-webhook-secret',
];

/** The webhook commands: the same service as the API's, for an organization an operator names. */
async function webhookCommand(
  db: Db,
  config: Config,
  command: string,
  values: Record<string, string | undefined>,
): Promise<unknown> {
  const org = required(values, 'org');
  await requireOrg(db, org);
  const service = new WebhookService(
    new EndpointStore(db, config.writeTimeoutMs),
    new DeliveryLogStore(db, config.writeTimeoutMs),
    config.webhooks,
  );
  // The operator acts as ADMIN_CLI: the audit log names the CLI, not a key.
  const caller = { organizationId: org, actor: ADMIN_CLI };
  try {
    switch (command) {
      case 'create-webhook-endpoint': {
        const events = values.events?.split(',').map((e) => e.trim());
        const unknown = events?.filter((e) => !(RUN_EVENT_TYPES as readonly string[]).includes(e));
        if (unknown?.length) {
          throw new UsageError(
            `unknown event type '${unknown[0]}'; one of ${RUN_EVENT_TYPES.join(', ')}`,
          );
        }
        return await service.createEndpoint(
          caller,
          {
            url: required(values, 'url'),
            ...(events ? { events: events as RunEventType[] } : {}),
            ...(values.description ? { description: values.description } : {}),
          },
          NO_DEADLINE,
        );
      }
      case 'list-webhook-endpoints':
        return await service.listEndpoints(caller);
      case 'delete-webhook-endpoint':
        return await service.deleteEndpoint(caller, required(values, 'id'), NO_DEADLINE);
      default:
        return await service.rotateSecret(caller, required(values, 'id'), NO_DEADLINE);
    }
  } catch (err) {
    // The service's refusals (a URL the policy refuses, an unknown id) are the operator's to fix.
    if (err instanceof DomainError) throw new UsageError(err.message);
    throw err;
  }
}

async function run(argv: string[]): Promise<unknown> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      org: { type: 'string' },
      id: { type: 'string' },
      file: { type: 'string' },
      url: { type: 'string' },
      events: { type: 'string' },
      description: { type: 'string' },
      scopes: { type: 'string' },
      'expires-at': { type: 'string' },
    },
    strict: true,
  });
  const config = loadConfig();
  if (command === 'migrate') return { applied: await migrate(config) };
  if (
    !command ||
    ![
      'create-org',
      'create-api-key',
      'revoke-api-key',
      'import-template',
      'seed-demo',
      ...WEBHOOK_COMMANDS,
    ].includes(command)
  ) {
    throw new UsageError(command ? `unknown command '${command}'\n${USAGE}` : USAGE);
  }
  const db = createDb({ ...config, dbPoolMax: 2 });
  try {
    const keys = new KeyStore(db, 0);
    switch (command) {
      case 'create-org':
        return await createOrganization(db, required(values, 'name'));
      case 'create-api-key': {
        const org = required(values, 'org');
        await requireOrg(db, org);
        const scopes = scopesOption(values.scopes);
        const expiresAt = expiresAtOption(values['expires-at']);
        return await keys.create(org, values.name ?? null, {
          ...(scopes ? { scopes } : {}),
          ...(expiresAt ? { expiresAt } : {}),
        });
      }
      case 'revoke-api-key': {
        // Audited as the admin CLI's; revoking twice keeps the first time.
        const revoked = await keys.revoke(required(values, 'id'));
        if (!revoked) throw new UsageError(`API key ${values.id} not found`);
        return revoked;
      }
      case 'import-template':
        return await importTemplate(
          db,
          config,
          required(values, 'org'),
          required(values, 'file'),
          values.id,
        );
      case 'create-webhook-endpoint':
      case 'list-webhook-endpoints':
      case 'delete-webhook-endpoint':
      case 'rotate-webhook-secret':
        return await webhookCommand(db, config, command, values);
      default: {
        // seed-demo: an organization, a key and a template to try the service with.
        const org = await createOrganization(db, 'Demo organization');
        const key = await keys.create(org.id, 'demo');
        const template = await new TemplateStore(db).insert(org.id, DEMO_TEMPLATE);
        return {
          organization_id: org.id,
          api_key: key.key,
          api_key_id: key.id,
          template_id: template.id,
        };
      }
    }
  } finally {
    await db.destroy();
  }
}

run(process.argv.slice(2)).then(
  (result) => {
    process.stdout.write(JSON.stringify(result) + '\n');
  },
  (err: unknown) => {
    const known =
      err instanceof UsageError ||
      err instanceof ConfigError ||
      (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION';
    process.stderr.write(
      `error: ${known ? (err as Error).message : String((err as Error)?.message ?? err)}\n`,
    );
    process.exitCode = known ? 2 : 1;
  },
);
