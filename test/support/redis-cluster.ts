// A private Redis Cluster of three masters for the tests that run on a cluster (npm run
// test:cluster): redis-server in cluster mode on three ports, joined by
// `redis-cli --cluster create`, every slot covered before it is handed out.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { ConnectionOptions } from 'bullmq';
import { Cluster } from 'ioredis';
import { freePort } from './processes.js';
import { RedisServer } from './redis-server.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);

/** A port whose cluster bus port (port + 10000) is a valid port too. */
async function clusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10000 <= 65535 && !taken.has(port)) return port;
  }
}

export class RedisCluster {
  private readonly clients: Cluster[] = [];

  private constructor(private readonly servers: RedisServer[]) {}

  static async start(masters = 3): Promise<RedisCluster> {
    const taken = new Set<number>();
    const servers: RedisServer[] = [];
    try {
      for (let i = 0; i < masters; i++) {
        const port = await clusterPort(taken);
        taken.add(port);
        servers.push(
          await RedisServer.start(port, [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            '2000',
          ]),
        );
      }
      await run(process.env.REDIS_CLI_BIN || 'redis-cli', [
        '--cluster',
        'create',
        ...servers.map((s) => `127.0.0.1:${s.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      const cluster = new RedisCluster(servers);
      await waitFor(
        'every node to see the whole cluster',
        async () => {
          const infos = await Promise.all(servers.map((s) => s.command<string>('CLUSTER', 'INFO')));
          return infos.every(
            (info) => /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info),
          );
        },
        20000,
      );
      return cluster;
    } catch (err) {
      await Promise.all(servers.map((s) => s.stop()));
      throw err;
    }
  }

  /** REDIS_CLUSTER_NODES for a service process. */
  get nodes(): string {
    return this.servers.map((s) => `127.0.0.1:${s.port}`).join(',');
  }

  get env(): Record<string, string> {
    return { REDIS_CLUSTER_NODES: this.nodes };
  }

  /** A cluster client for the test's own queues (closed by stop). */
  connection(): ConnectionOptions {
    const client = new Cluster(
      this.servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
      { redisOptions: { maxRetriesPerRequest: 1 } },
    );
    client.on('error', () => undefined); // the tests break this Redis on purpose
    this.clients.push(client);
    return client;
  }

  /** Runs a command on every master; answers in node order. */
  commandOnEach<T = unknown>(name: string, ...args: Array<string | number>): Promise<T[]> {
    return Promise.all(this.servers.map((s) => s.command<T>(name, ...args)));
  }

  /** FLUSHALL on every master: every key of the cluster is gone. */
  async flushAll(): Promise<void> {
    await this.commandOnEach('FLUSHALL');
  }

  async stop(): Promise<void> {
    for (const client of this.clients.splice(0)) client.disconnect();
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
