// /readyz answers 200 only once the API can serve at full speed: its MySQL pools open whole and
// the Lua scripts of its request path in Redis. The API runs against a Redis of the test's own,
// started empty, so no script is in it but those the API put there.
import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { RATE_LIMIT_SCRIPT } from '../../src/http/rate-limit.js';
import { JOB_KINDS } from '../../src/jobs/kinds.js';
import { request } from '../support/http.js';
import { freePort, startApi, type ApiProcess } from '../support/processes.js';
import { RedisServer } from '../support/redis-server.js';

const POOL_MAX = 7;
const BATCH_POOL = 4; // the API's pool for new runs' batches (server.ts)

/** The SHA1 of every script BullMQ defines on a queue's connection (as ioredis names them). */
async function bullmqScriptShas(redisUrl: string): Promise<string[]> {
  const queue = new Queue(JOB_KINDS.applyRuns.queue, {
    connection: { url: redisUrl },
    prefix: 'wrs-readiness-shas',
  });
  try {
    await queue.waitUntilReady();
    // Defining a command is local to the connection: nothing is sent to Redis by this.
    const client = (await queue.getBackend().client) as unknown as {
      scriptsSet: Record<string, { sha: string }>;
    };
    return Object.values(client.scriptsSet).map((s) => s.sha);
  } finally {
    await queue.close();
  }
}

describe('readiness: /readyz says 200 only once the API is warm', () => {
  let redis: RedisServer | undefined;
  let api: ApiProcess | undefined;

  after(async () => {
    await api?.stop();
    await redis?.stop();
  });

  it('answers 503 until warm, then 200 with its pools open and its scripts in Redis', async () => {
    // The API starts while its Redis is not up yet, so that it cannot be warm at once whatever
    // the machine's speed; then its Redis starts, empty.
    const [redisPort, metricsPort] = [await freePort(), await freePort()];
    api = await startApi({
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      METRICS_PORT: String(metricsPort),
      DB_POOL_MAX: String(POOL_MAX),
    });
    const answers: Array<{ status: number; body: unknown }> = [];
    const readyz = async () => {
      const reply = await request(`${api!.url}/readyz`);
      answers.push({ status: reply.status, body: reply.body });
      return reply.status;
    };
    for (let i = 0; i < 3; i++) expect(await readyz(), 'Redis down').to.equal(503);
    redis = await RedisServer.start(redisPort);

    // Polled as a load balancer would, until the first 200.
    for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
      if ((await readyz()) === 200) break;
    }
    expect(answers.at(-1)!.status, 'in the end').to.equal(200);
    expect(answers.at(-1)!.body).to.deep.include({ mysql: true, redis: true, warm: true });
    for (const a of answers.slice(0, -1)) {
      expect(a.status).to.equal(503);
      expect(a.body).to.deep.include({ warm: false });
    }

    // At its first 200: every connection of both pools open ...
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const open = (pool: string) =>
      ['used', 'free']
        .map((state) => {
          const line = metrics
            .split('\n')
            .find((l) => l.startsWith(`wrs_db_pool_connections{pool="${pool}",state="${state}"}`));
          return Number(line?.split(' ').at(-1) ?? Number.NaN);
        })
        .reduce((a, b) => a + b, 0);
    // The warm-up's own requests (refused at the key check) are neither logged nor counted.
    const refused = api.lines.filter(
      (l) => l.includes('"msg":"request"') && l.includes('"status":403'),
    );
    expect(refused, 'warm-up requests in the log').to.have.length(0);
    expect(metrics).not.to.match(/wrs_http_request_duration_seconds_count\{[^}]*status="403"/);
    expect(open('main'), 'main pool connections open').to.equal(POOL_MAX);
    expect(open('batch'), 'batch pool connections open').to.equal(BATCH_POOL);

    // ... and every script of its request path in its Redis: the rate limiter's and BullMQ's.
    const shas = [
      createHash('sha1').update(RATE_LIMIT_SCRIPT).digest('hex'),
      ...(await bullmqScriptShas(redis.url)),
    ];
    const client = new Redis(redis.url);
    try {
      const exists = (await client.script('EXISTS', ...shas)) as number[];
      expect(
        exists.filter((e) => e !== 1),
        'scripts missing from Redis',
      ).to.have.length(0);
    } finally {
      client.disconnect();
    }
  });
});
