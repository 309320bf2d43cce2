// Every setting of every process, read from the environment once at start.
// A bad value stops the process with a message that names the variable.

export interface Config {
  databaseUrl: string;
  /** Read replicas of the primary (src/db-replicas.ts); undefined: every read on the primary. */
  replicas: ReplicaConfig | undefined;
  /**
   * The nodes of a Galera cluster, in the order they are preferred as the writer (src/db-nodes.ts):
   * every connection goes to one of them, DATABASE_URL giving the user, password and database.
   * Undefined: DATABASE_URL's own host.
   */
  databaseNodes: DbNode[] | undefined;
  /** How often the writer's health is checked (and sooner after an error that may be its). */
  databaseCheckIntervalMs: number;
  redisUrl: string;
  /** Seed nodes of a Redis Cluster; when set, used instead of redisUrl. */
  redisClusterNodes: RedisNode[] | undefined;
  port: number;
  /** API processes serving the port (node:cluster); 1: the process serves itself. */
  apiProcesses: number;
  basePath: string;
  queuePrefix: string;
  logLevel: LogLevel;
  /** Largest accepted request body, in bytes (413 above). */
  bodyLimitBytes: number;
  /** Most keys in input_fields / user_assignments of one request. */
  maxInputFields: number;
  /** Longest accepted input value, in characters. */
  maxFieldLength: number;
  /** Longest accepted assignee (a user id), in characters; the column holds ASSIGNEE_COLUMN. */
  maxAssigneeLength: number;
  listDefaultLimit: number;
  listMaxLimit: number;
  /** Time the service may spend on a request once its body has arrived (503 when passed). */
  requestTimeoutMs: number;
  /** Time a client has to send its request body (408 when passed). */
  bodyTimeoutMs: number;
  /** Time a write already sent to MySQL is given to report its outcome. */
  writeTimeoutMs: number;
  /** How long an Idempotency-Key and its answer are kept. */
  idempotencyTtlSeconds: number;
  /** Opens Bull Board at /admin/queues; undefined: no board. */
  operatorToken: string | undefined;
  /** Port of this process's /metrics server; undefined: none. */
  metricsPort: number | undefined;
  /** Requests per key per window; 0 turns the limiter off. */
  rateLimitMax: number;
  rateLimitWindowMs: number;
  /** How long a looked-up API key (or a miss) is trusted before MySQL is asked again. */
  keyCacheTtlMs: number;
  /** How often an API process writes when its keys were last used (lastUsedAt). */
  keyLastUsedFlushMs: number;
  dbPoolMax: number;
  dbAcquireTimeoutMs: number;
  shutdownTimeoutMs: number;
  workerConcurrency: number;
  /**
   * Least time between the beginnings of one organization's turns in a worker: a turn that
   * comes sooner waits, gathering the changes that arrive meanwhile (workers/turn-pacer.ts).
   */
  workerGatherMs: number;
  jobAttempts: number;
  jobBackoffMs: number;
  workerLockMs: number;
  reconcileIntervalMs: number;
  /** A run whose stored change is older than this and not applied is enqueued again. */
  reconcileAfterMs: number;
  /** Runs a bulk action changes per transaction (src/bulk/bulk-runner.ts). */
  bulkBatchSize: number;
  webhooks: WebhookConfig;
  retention: RetentionConfig;
  streams: StreamConfig;
  /** How often each worker folds new run events into the insights' rollups (src/insights/). */
  insightFoldIntervalMs: number;
  /** How long the fold gives way to a worker applying runs before it folds regardless. */
  insightFoldDeferMs: number;
  /** Then, while runs are being applied, the share of the time (percent) the fold may take. */
  insightFoldBusyPercent: number;
}

/** A database server's address. */
export interface DbNode {
  host: string;
  port: number;
}

/** Reads from MariaDB replicas, with read-your-writes (src/db-replicas.ts). */
export interface ReplicaConfig {
  urls: string[];
  /** Longest a read waits for a replica to reach the primary's position; then it reads the primary. */
  waitMs: number;
  /** A replica that cannot reach the primary's position within this is taken out of service. */
  maxLagMs: number;
  /** How often each API process checks its replicas. */
  checkIntervalMs: number;
  /** Connections of each replica's pool. */
  poolMax: number;
}

/** The live event stream (src/streams/). */
export interface StreamConfig {
  /** A comment line is sent on every open stream this often. */
  heartbeatMs: number;
  /** Streams read MySQL at least this often, whatever Redis says (the fallback poll). */
  pollIntervalMs: number;
  /** Open streams per API key (429 too_many_streams beyond). */
  maxPerKey: number;
  /** Bytes a stream may hold unsent for a slow client before it is cut off. */
  bufferBytes: number;
  /** How long a gap in the event ids stays open before it is probed (see event-watermark.ts). */
  gapGraceMs: number;
}

/** Deleting finished runs whose retention ended (src/retention/). */
export interface RetentionConfig {
  /** Days an organization keeps its finished runs unless it set its own; undefined: forever. */
  defaultDays: number | undefined;
  /** How often each worker enqueues the retention job (MySQL decides what is due). */
  intervalMs: number;
  /** Runs deleted per transaction. */
  batch: number;
  /** Pause between two batches, so that the deletion leaves the database to the requests. */
  pauseMs: number;
}

/** The longest retention an organization (or the operator) may set: ten years. */
export const MAX_RETENTION_DAYS = 3650;

export interface WebhookConfig {
  /** Endpoints may use http:// (else https only). */
  allowHttp: boolean;
  /** Endpoints may reach loopback, private, link-local and metadata addresses. */
  allowPrivate: boolean;
  /** Time one attempt may take, response included. */
  timeoutMs: number;
  /** Attempts of one delivery before it is failed (the schedule spans about a day). */
  maxAttempts: number;
  /** Delay after the first failed attempt; each next one is 3× longer (capped), with jitter. */
  backoffBaseMs: number;
  /** An endpoint whose every attempt failed for this long is disabled. */
  disableAfterMs: number;
  /** How often each worker looks for committed events to turn into deliveries. */
  dispatchIntervalMs: number;
  /** Attempts in flight at once in one endpoint's turn (to one endpoint). */
  concurrency: number;
  /** Endpoints' turns a worker process works at once. */
  turns: number;
  /** Most endpoints per organization. */
  maxEndpoints: number;
}

export interface RedisNode {
  host: string;
  port: number;
}

/** Width of workflow_runs.current_step_assignee: no configured limit may exceed it. */
export const ASSIGNEE_COLUMN = 255;

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^-?\d+$/.test(raw.trim()))
    throw new ConfigError(`${name} must be an integer, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) {
    throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function url(env: Env, name: string, fallback: string, protocols: string[]): string {
  const raw = env[name] || fallback;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} is not a valid URL`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

// host:port,host:port,... (an IPv6 host in brackets: [::1]:7000).
function hostPorts(env: Env, name: string): Array<{ host: string; port: number }> | undefined {
  const raw = (env[name] ?? '').trim();
  if (raw === '') return undefined;
  return raw.split(',').map((part) => {
    const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(part.trim());
    const port = Number(match?.[2]);
    if (!match || port < 1 || port > 65535) {
      throw new ConfigError(`${name} must be host:port,host:port,..., got "${part}"`);
    }
    return { host: match[1]!.replace(/^\[|\]$/g, ''), port };
  });
}

function replicaConfig(env: Env): ReplicaConfig | undefined {
  const raw = (env.DATABASE_REPLICA_URLS ?? '').trim();
  if (raw === '') return undefined;
  const urls = raw.split(',').map((part, i) => {
    const name = `DATABASE_REPLICA_URLS (entry ${i + 1})`;
    return url({ [name]: part.trim() }, name, '', ['mysql:']);
  });
  return {
    urls,
    waitMs: int(env, 'REPLICA_WAIT_MS', 50, 1, 10_000),
    maxLagMs: int(env, 'REPLICA_MAX_LAG_MS', 1000, 10, 600_000),
    checkIntervalMs: int(env, 'REPLICA_CHECK_INTERVAL_MS', 1000, 50, 600_000),
    poolMax: int(env, 'REPLICA_POOL_MAX', 5, 1, 1000),
  };
}

function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').trim();
  if (raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function webhookConfig(env: Env): WebhookConfig {
  return {
    allowHttp: flag(env, 'WEBHOOK_ALLOW_HTTP'),
    allowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE'),
    timeoutMs: int(env, 'WEBHOOK_TIMEOUT_MS', 10000, 100, 60000),
    maxAttempts: int(env, 'WEBHOOK_MAX_ATTEMPTS', 12, 1, 50),
    backoffBaseMs: int(env, 'WEBHOOK_BACKOFF_BASE_MS', 5000, 10, 3_600_000),
    disableAfterMs: int(env, 'WEBHOOK_DISABLE_AFTER_MS', 5 * 86_400_000, 1000, 365 * 86_400_000),
    dispatchIntervalMs: int(env, 'WEBHOOK_DISPATCH_INTERVAL_MS', 200, 10, 60000),
    concurrency: int(env, 'WEBHOOK_CONCURRENCY', 32, 1, 1000),
    turns: int(env, 'WEBHOOK_TURNS', 8, 1, 256),
    maxEndpoints: int(env, 'WEBHOOK_MAX_ENDPOINTS', 20, 1, 1000),
  };
}

function retentionConfig(env: Env): RetentionConfig {
  const days = env.RUN_RETENTION_DAYS;
  return {
    defaultDays:
      days === undefined || days.trim() === ''
        ? undefined
        : int(env, 'RUN_RETENTION_DAYS', 0, 1, MAX_RETENTION_DAYS),
    intervalMs: int(env, 'RUN_RETENTION_INTERVAL_MS', 60_000, 50, 86_400_000),
    batch: int(env, 'RUN_RETENTION_BATCH', 200, 1, 5000),
    pauseMs: int(env, 'RUN_RETENTION_PAUSE_MS', 20, 0, 60_000),
  };
}

function streamConfig(env: Env): StreamConfig {
  return {
    heartbeatMs: int(env, 'STREAM_HEARTBEAT_MS', 15000, 10, 600000),
    pollIntervalMs: int(env, 'STREAM_POLL_INTERVAL_MS', 1000, 10, 60000),
    maxPerKey: int(env, 'STREAM_MAX_PER_KEY', 5, 1, 10000),
    bufferBytes: int(env, 'STREAM_BUFFER_BYTES', 1024 * 1024, 1024, 256 * 1024 * 1024),
    gapGraceMs: int(env, 'STREAM_GAP_GRACE_MS', 250, 10, 60000),
  };
}

function basePath(env: Env): string {
  const raw = (env.BASE_PATH ?? '').trim();
  if (raw === '' || raw === '/') return '';
  if (!/^(\/[A-Za-z0-9._~-]+)+\/?$/.test(raw)) {
    throw new ConfigError(`BASE_PATH must look like /api/v1, got "${raw}"`);
  }
  return raw.replace(/\/$/, '');
}

function operatorToken(env: Env): string | undefined {
  const raw = env.OPERATOR_TOKEN;
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < 16 || /\s/.test(raw)) {
    throw new ConfigError('OPERATOR_TOKEN must be at least 16 characters, without spaces');
  }
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = (env.LOG_LEVEL || 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const queuePrefix = env.QUEUE_PREFIX || 'wrs';
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(queuePrefix)) {
    throw new ConfigError('QUEUE_PREFIX must be 1-64 letters, digits, _ or -');
  }
  const listMaxLimit = int(env, 'LIST_MAX_LIMIT', 1000, 1, 10000);
  return {
    databaseUrl: url(env, 'DATABASE_URL', 'mysql://wrs:wrs@127.0.0.1:3306/workflow_runs', [
      'mysql:',
    ]),
    replicas: replicaConfig(env),
    databaseNodes: hostPorts(env, 'DATABASE_NODES'),
    databaseCheckIntervalMs: int(env, 'DATABASE_CHECK_INTERVAL_MS', 1000, 50, 60000),
    redisUrl: url(env, 'REDIS_URL', 'redis://127.0.0.1:6379', ['redis:', 'rediss:']),
    redisClusterNodes: hostPorts(env, 'REDIS_CLUSTER_NODES'),
    port: int(env, 'PORT', 3000, 0, 65535),
    apiProcesses: int(env, 'API_PROCESSES', 1, 1, 64),
    basePath: basePath(env),
    queuePrefix,
    logLevel,
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 256 * 1024, 1024, 64 * 1024 * 1024),
    maxInputFields: int(env, 'MAX_INPUT_FIELDS', 200, 1, 10000),
    maxFieldLength: int(env, 'MAX_FIELD_LENGTH', 10000, 1, 1024 * 1024),
    maxAssigneeLength: int(env, 'MAX_ASSIGNEE_LENGTH', ASSIGNEE_COLUMN, 1, ASSIGNEE_COLUMN),
    listDefaultLimit: Math.min(int(env, 'LIST_DEFAULT_LIMIT', 100, 1, 10000), listMaxLimit),
    listMaxLimit,
    requestTimeoutMs: int(env, 'REQUEST_TIMEOUT_MS', 10000, 100, 600000),
    bodyTimeoutMs: int(env, 'BODY_TIMEOUT_MS', 30000, 100, 600000),
    writeTimeoutMs: int(env, 'WRITE_TIMEOUT_MS', 5000, 100, 600000),
    idempotencyTtlSeconds: int(env, 'IDEMPOTENCY_TTL_SECONDS', 86400, 1, 30 * 86400),
    metricsPort: env.METRICS_PORT ? int(env, 'METRICS_PORT', 0, 0, 65535) : undefined,
    operatorToken: operatorToken(env),
    rateLimitMax: int(env, 'RATE_LIMIT_MAX', 6000, 0, 1_000_000_000),
    rateLimitWindowMs: int(env, 'RATE_LIMIT_WINDOW_MS', 60000, 100, 86_400_000),
    keyCacheTtlMs: int(env, 'KEY_CACHE_TTL_MS', 2000, 0, 60000),
    // At most a minute: lastUsedAt is promised at most a minute old.
    keyLastUsedFlushMs: int(env, 'KEY_LAST_USED_FLUSH_MS', 15000, 100, 60000),
    dbPoolMax: int(env, 'DB_POOL_MAX', 10, 1, 1000),
    dbAcquireTimeoutMs: int(env, 'DB_ACQUIRE_TIMEOUT_MS', 2000, 100, 60000),
    shutdownTimeoutMs: int(env, 'SHUTDOWN_TIMEOUT_MS', 10000, 0, 600000),
    workerConcurrency: int(env, 'WORKER_CONCURRENCY', 64, 1, 1000),
    workerGatherMs: int(env, 'WORKER_GATHER_MS', 0, 0, 1000),
    jobAttempts: int(env, 'JOB_ATTEMPTS', 5, 1, 100),
    jobBackoffMs: int(env, 'JOB_BACKOFF_MS', 1000, 1, 3_600_000),
    workerLockMs: int(env, 'WORKER_LOCK_MS', 30000, 1000, 3_600_000),
    reconcileIntervalMs: int(env, 'RECONCILE_INTERVAL_MS', 5000, 50, 3_600_000),
    reconcileAfterMs: int(env, 'RECONCILE_AFTER_MS', 30000, 100, 86_400_000),
    bulkBatchSize: int(env, 'BULK_BATCH_SIZE', 200, 1, 1000),
    webhooks: webhookConfig(env),
    retention: retentionConfig(env),
    streams: streamConfig(env),
    insightFoldIntervalMs: int(env, 'INSIGHTS_FOLD_INTERVAL_MS', 1000, 10, 60000),
    insightFoldDeferMs: int(env, 'INSIGHTS_FOLD_DEFER_MS', 5000, 0, 600000),
    insightFoldBusyPercent: int(env, 'INSIGHTS_FOLD_BUSY_PERCENT', 10, 1, 100),
  };
}

/** loadConfig for a process entry point: a bad setting ends the process with its message. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`invalid configuration: ${err.message}\n`);
      process.exit(78); // EX_CONFIG
    }
    throw err;
  }
}
