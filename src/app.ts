// Builds the Koa application: the middleware chain and the routes. Holds no state of its own.
import { Router } from '@koa/router';
import Koa from 'koa';
import { REHEARSAL_HEADER } from './warm-up.js';
import type { RedisClient } from './queue.js';
import { auditRoutes } from './audit/audit-routes.js';
import { auditSchemas } from './audit/audit-schemas.js';
import { AuditStore } from './audit/audit-store.js';
import { requireApiKey } from './auth/require-api-key.js';
import { bulkRoutes } from './bulk/bulk-routes.js';
import { bulkSchemas } from './bulk/bulk-schemas.js';
import type { BulkService } from './bulk/bulk-service.js';
import type { MigrationService } from './run-migration/migration-service.js';
import { migrationRoutes } from './run-migration/migration-routes.js';
import type { ScheduleService } from './schedules/schedule-service.js';
import { scheduleRoutes } from './schedules/schedule-routes.js';
import { scheduleSchemas } from './schedules/schedule-schemas.js';
import type { KeyStore } from './auth/key-store.js';
import { keyRoutes } from './auth/key-routes.js';
import { keySchemas } from './auth/key-schemas.js';
import type { KeyService } from './auth/key-service.js';
import type { Config } from './config.js';
import type { Db } from './db.js';
import type { Reader } from './db-replicas.js';
import type { AppState } from './http/context.js';
import { healthRoutes } from './http/health-routes.js';
import { idempotencyKeys } from './http/idempotency.js';
import { inOrderPerConnection } from './http/in-order.js';
import { IdempotencyStore } from './idempotency/idempotency-keys.js';
import { jsonBody } from './http/json-body.js';
import { rateLimit } from './http/rate-limit.js';
import { requestContext } from './http/request-context.js';
import { requestTimeout } from './http/timeout.js';
import type { Logger } from './logger.js';
import { runRoutes } from './runs/run-routes.js';
import { insightRoutes } from './insights/insight-routes.js';
import { insightSchemas } from './insights/insight-schemas.js';
import type { InsightService } from './insights/insight-service.js';
import { taskRoutes } from './tasks/task-routes.js';
import { taskSchemas } from './tasks/task-schemas.js';
import { TaskService } from './tasks/task-service.js';
import type { RunService } from './runs/run-service.js';
import type { RunStore } from './runs/run-store.js';
import { templateRoutes } from './templates/template-routes.js';
import { templateSchemas } from './templates/template-schemas.js';
import type { TemplateService } from './templates/template-service.js';
import { mountRoutes, type Route } from './http/contract.js';
import { openApiDocument } from './http/openapi.js';
import { docsRoutes } from './http/docs-routes.js';
import { consoleRoutes } from './http/console-routes.js';
import { operatorBoard } from './http/operator-board.js';
import type { Queue } from 'bullmq';
import { runSchemas } from './runs/run-schemas.js';
import { webhookRoutes } from './webhooks/webhook-routes.js';
import { RUN_EVENT_WEBHOOK, webhookSchemas } from './webhooks/webhook-schemas.js';
import type { WebhookService } from './webhooks/webhook-service.js';
import { retentionRoutes } from './retention/retention-routes.js';
import type { RetentionService } from './retention/retention-service.js';
import type { StreamHub } from './streams/stream-hub.js';
import { streamRoutes } from './streams/stream-routes.js';
import type { StreamStore } from './streams/stream-store.js';

export interface AppDeps {
  config: Config;
  log: Logger;
  db: Db;
  /** Where the reads that may go to a replica go (src/db-replicas.ts); unset: db. */
  reader?: Reader;
  /** Fail-fast Redis connection for the rate limiter and readiness. */
  redis: RedisClient;
  keys: KeyStore;
  templateService: TemplateService;
  runs: RunStore;
  runService: RunService;
  bulkService: BulkService;
  migrationService: MigrationService;
  scheduleService: ScheduleService;
  webhookService: WebhookService;
  keyService: KeyService;
  retentionService: RetentionService;
  insightService: InsightService;
  /** The live event streams of this process (src/streams/). */
  streams: { hub: StreamHub; store: StreamStore };
  isShuttingDown: () => boolean;
  /** Whether the process has warmed up (warm-up.ts); /readyz answers 503 until then. */
  isWarm: () => boolean;
  /**
   * The secret the warm-up's own requests carry (warm-up.ts): they are neither logged nor
   * counted. Made at start, known only to this process.
   */
  rehearsalToken?: string;
  /** The queues of every job kind, for the operators' board (when OPERATOR_TOKEN is set). */
  boardQueues?: Queue[];
}

/** Every route of the API, with its contract; the app mounts them and a document can list them. */
export function apiRoutes(deps: AppDeps): Route[] {
  const { config } = deps;
  return [
    ...runRoutes({
      service: deps.runService,
      store: deps.runs,
      schemas: runSchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...taskRoutes({
      // Reads only: a task is a run's current step, changed by the run service.
      service: new TaskService(deps.runs),
      schemas: taskSchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...migrationRoutes({ service: deps.migrationService }),
    ...scheduleRoutes({
      service: deps.scheduleService,
      schemas: scheduleSchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...bulkRoutes({ service: deps.bulkService, schemas: bulkSchemas(config) }),
    ...templateRoutes({
      service: deps.templateService,
      schemas: templateSchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...webhookRoutes({
      service: deps.webhookService,
      schemas: webhookSchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...keyRoutes({
      service: deps.keyService,
      schemas: keySchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...auditRoutes({
      // Reads only: the entries are written by each change's own store, in its transaction.
      store: new AuditStore(deps.db, deps.reader),
      schemas: auditSchemas(config),
      defaultLimit: config.listDefaultLimit,
    }),
    ...retentionRoutes({ service: deps.retentionService }),
    ...insightRoutes({ service: deps.insightService, schemas: insightSchemas(config) }),
    ...streamRoutes(deps.streams),
  ];
}

/** The API document (OpenAPI 3.1) of these routes: what /openapi.json serves. */
export function apiDocument(routes: readonly Route[], config: Config): Record<string, unknown> {
  return openApiDocument(routes, config.basePath, [RUN_EVENT_WEBHOOK]);
}

export function createApp(deps: AppDeps): Koa<AppState> {
  const { config } = deps;
  const app = new Koa<AppState>();
  app.silent = true; // errors are logged by requestContext, as JSON

  const router = new Router<AppState>({ prefix: config.basePath || undefined });
  healthRoutes(router, {
    db: deps.db,
    redis: deps.redis,
    isShuttingDown: deps.isShuttingDown,
    isWarm: deps.isWarm,
  });
  const routes = apiRoutes(deps);
  mountRoutes(router, routes, {
    apiKey: [
      requireApiKey(deps.keys),
      rateLimit(
        deps.redis,
        {
          max: config.rateLimitMax,
          windowMs: config.rateLimitWindowMs,
          prefix: config.queuePrefix,
        },
        deps.log,
      ),
    ],
    body: jsonBody(config.bodyLimitBytes, config.bodyTimeoutMs),
    // The service's clock starts once the request is in hand: for a POST after its body has
    // arrived (the body reader bounds the client's time, with a 408).
    timeout: requestTimeout(config.requestTimeoutMs),
    idempotency: idempotencyKeys(
      new IdempotencyStore(deps.db),
      config.idempotencyTtlSeconds * 1000,
    ),
  });

  // Built once, from the same routes; no key needed to read it.
  const document = JSON.stringify(apiDocument(routes, config));
  router.get('/openapi.json', (ctx) => {
    ctx.type = 'application/json';
    ctx.body = document;
  });
  docsRoutes(router);
  consoleRoutes(router, config.basePath);

  app.use(inOrderPerConnection());
  const token = deps.rehearsalToken;
  app.use(
    requestContext(
      deps.log,
      deps.isShuttingDown,
      (ctx) => token !== undefined && ctx.get(REHEARSAL_HEADER) === token,
    ),
  );
  const board = operatorBoard({
    token: config.operatorToken,
    basePath: config.basePath,
    queues: deps.boardQueues ?? [],
  });
  if (board) app.use(board);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
