// What an API process does between listening and answering /readyz 200, so that the first
// requests a load balancer sends it are served at full speed: its MySQL pools opened whole
// (each connection made and used once), the Lua scripts of its Redis connections loaded into
// Redis, its queues' connections ready, and its request path compiled by V8 (the create's own
// code in runs/create-rehearsal.ts; the HTTP path up to the key check by requests to itself).
// Without it the first seconds of load paid for all of these at once, while 32 requests
// waited (docs/performance.md: the coldstart phase). It also checks that the database numbers
// ids one by one (db.ts, checkIdStep): not ready, saying why, on one that does not.
import type { Queue } from 'bullmq';
import type { Cluster, Redis } from 'ioredis';
import type { Connection } from 'mysql2';
import { checkIdStep, type Db } from './db.js';
import type { Logger } from './logger.js';
import type { RedisClient } from './queue.js';

export interface WarmUpDeps {
  /** The process's MySQL pools, each opened to its maximum. */
  pools: readonly Db[];
  /** Connections whose defined commands (Lua scripts) must be in Redis before traffic. */
  redis: readonly RedisClient[];
  /** The queues the request path adds to: connected, their scripts loaded. */
  queues: readonly Queue[];
  /** Work to do once the I/O is ready (the create rehearsal, the requests to itself). */
  rehearse: () => Promise<void>;
  log: Logger;
}

/** The header that marks the warm-up's requests to its own process, with a secret of its own. */
export const REHEARSAL_HEADER = 'x-wrs-rehearsal';

/**
 * Sends the process's own HTTP server `count` creates (8 at a time) that are refused at the
 * key check (a made-up key, looked up once, then a cached miss): Node's HTTP parser, Koa, the
 * router, the request context and the key check run as they will for real requests, and V8
 * compiles them now rather than under the first load. Nothing is written.
 */
export async function rehearseRequests(
  url: string,
  token: string,
  body: string,
  count: number,
): Promise<void> {
  const headers = {
    'content-type': 'application/json',
    authorization: `Bearer wrs_${'0'.repeat(32)}`,
    [REHEARSAL_HEADER]: token,
  };
  let left = count;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (left-- > 0) {
        const reply = await fetch(url, { method: 'POST', headers, body });
        await reply.arrayBuffer();
      }
    }),
  );
}

/** Whether the process has warmed up: /readyz is 503 until it has. */
export class Readiness {
  private warmed = false;

  get warm(): boolean {
    return this.warmed;
  }

  /**
   * Warms up, retrying until it succeeds (MySQL or Redis may be away at start; /readyz says
   * so meanwhile). Resolves once warm; stops trying when `stopped` says so (shutdown).
   */
  async warmUp(deps: WarmUpDeps, stopped: () => boolean): Promise<void> {
    const began = Date.now();
    for (let attempt = 1; !stopped(); attempt++) {
      try {
        await warmUp(deps);
        this.warmed = true;
        deps.log.info('warmed up', { ms: Date.now() - began });
        return;
      } catch (err) {
        deps.log.warn('warm-up failed; trying again', { attempt, err: (err as Error).message });
        await new Promise((resolve) => setTimeout(resolve, Math.min(200 * attempt, 2000)));
      }
    }
  }
}

async function warmUp(deps: WarmUpDeps): Promise<void> {
  await Promise.all([
    ...deps.pools.map(async (pool) => {
      await openWhole(pool);
      // Not ready on a server that steps ids by more than one: readers would lag (db.ts).
      await checkIdStep(pool);
    }),
    ...deps.redis.map(loadScripts),
    ...deps.queues.map(async (queue) => {
      await queue.waitUntilReady();
      // BullMQ types its client as the subset it uses; on this backend it is the ioredis one.
      await loadScripts((await queue.getBackend().client) as unknown as RedisClient);
    }),
  ]);
  await deps.rehearse();
}

/**
 * Opens every connection a pool may hold, at once, and uses each for one statement. The pools
 * keep them (db.ts, poolMin): a burst then never waits for connections to be made. A worker
 * does the same before it says it is ready (workers/readiness.ts).
 */
export async function openWhole(db: Db): Promise<void> {
  const max = (db.client.pool as { max: number }).max;
  const held: Connection[] = [];
  try {
    await Promise.all(
      Array.from({ length: max }, async () => {
        const conn = (await db.client.acquireConnection()) as Connection;
        held.push(conn);
        await conn.promise().query('SELECT 1');
      }),
    );
  } finally {
    await Promise.all(held.map((conn) => db.client.releaseConnection(conn)));
  }
}

/** The Lua scripts a connection has defined (ioredis keeps them by name), loaded into Redis. */
async function loadScripts(client: RedisClient): Promise<void> {
  await connected(client);
  const scripts = Object.values(client.scriptsSet as Record<string, { lua: string }>);
  const nodes = client.isCluster ? (client as Cluster).nodes('master') : [client as Redis];
  if (nodes.length === 0) throw new Error('no Redis master known yet');
  await Promise.all(
    nodes.flatMap((node) => scripts.map((script) => node.script('LOAD', script.lua))),
  );
}

/** Resolves once the connection is up: request connections refuse commands until then. */
async function connected(client: RedisClient, timeoutMs = 5000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', ready);
      reject(new Error(`Redis not connected after ${timeoutMs} ms`));
    }, timeoutMs);
    const ready = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', ready);
  });
}
