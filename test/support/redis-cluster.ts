// A private Redis Cluster for the tests that run on a cluster (npm run test:cluster):
// redis-server in cluster mode on its own ports, joined by `redis-cli --cluster create`, every
// slot covered (and every replica in sync) before it is handed out. By default three masters
// and no replicas; the failover drill asks for a replica per master and a short node timeout,
// and finds, kills (SIGKILL) and replaces the master of a key's slot.
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

export interface ClusterOptions {
  masters?: number;
  /** Replicas of each master (redis-cli --cluster-replicas). */
  replicas?: number;
  /** cluster-node-timeout: how long a master may be unreachable before its replica takes over. */
  nodeTimeoutMs?: number;
}

/** A node as CLUSTER NODES lists it. */
export interface ClusterNode {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** The master's id, for a replica. */
  masterId: string | undefined;
  failed: boolean;
}

export class RedisCluster {
  private readonly clients: Cluster[] = [];

  private constructor(private readonly servers: RedisServer[]) {}

  static async start(options: ClusterOptions = {}): Promise<RedisCluster> {
    const { masters = 3, replicas = 0, nodeTimeoutMs = 2000 } = options;
    const taken = new Set<number>();
    const servers: RedisServer[] = [];
    try {
      for (let i = 0; i < masters * (1 + replicas); i++) {
        const port = await clusterPort(taken);
        taken.add(port);
        servers.push(
          await RedisServer.start(port, [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            'nodes.conf',
            '--cluster-node-timeout',
            String(nodeTimeoutMs),
          ]),
        );
      }
      await run(process.env.REDIS_CLI_BIN || 'redis-cli', [
        '--cluster',
        'create',
        ...servers.map((s) => `127.0.0.1:${s.port}`),
        '--cluster-replicas',
        String(replicas),
        '--cluster-yes',
      ]);
      const cluster = new RedisCluster(servers);
      await cluster.waitHealthy(masters * replicas);
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

  /** Runs a command on every running master; answers in node order. */
  async commandOnEach<T = unknown>(name: string, ...args: Array<string | number>): Promise<T[]> {
    const masters = await this.masters();
    return Promise.all(masters.map((s) => s.command<T>(name, ...args)));
  }

  /** FLUSHALL on every master: every key of the cluster is gone. */
  async flushAll(): Promise<void> {
    await this.commandOnEach('FLUSHALL');
  }

  /** The running servers that are masters now (a replica may have been promoted). */
  async masters(): Promise<RedisServer[]> {
    if (this.servers.length === 0) return [];
    const nodes = await this.clusterNodes();
    const ports = new Set(nodes.filter((n) => n.role === 'master' && !n.failed).map((n) => n.port));
    return this.servers.filter((s) => s.running && ports.has(s.port));
  }

  /** CLUSTER NODES as seen by a running node. */
  async clusterNodes(): Promise<ClusterNode[]> {
    const text = await this.anyRunning().command<string>('CLUSTER', 'NODES');
    return text
      .trim()
      .split('\n')
      .map((line) => {
        // <id> <ip:port@cport> <flags> <master> <ping-sent> <pong-recv> <epoch> <link> <slot>...
        const [id, address, flags, master] = line.split(' ');
        const flagSet = new Set(flags!.split(','));
        return {
          id: id!,
          port: Number(/:(\d+)@/.exec(address!)?.[1]),
          role: flagSet.has('master') ? 'master' : 'replica',
          masterId: master === '-' ? undefined : master,
          failed: flagSet.has('fail') || flagSet.has('fail?'),
        };
      });
  }

  /** The hash slot of a key (CLUSTER KEYSLOT). */
  slotOf(key: string): Promise<number> {
    return this.anyRunning().command<number>('CLUSTER', 'KEYSLOT', key);
  }

  /** The server that is the slot's master now, as a running node sees it (CLUSTER SLOTS). */
  async masterOf(slot: number): Promise<RedisServer> {
    type Range = [number, number, [string, number, ...unknown[]], ...unknown[]];
    const ranges = await this.anyRunning().command<Range[]>('CLUSTER', 'SLOTS');
    const range = ranges.find(([from, to]) => from <= slot && slot <= to);
    const port = range?.[2][1];
    const server = this.servers.find((s) => s.port === port);
    if (!server) throw new Error(`no master holds slot ${slot}`);
    return server;
  }

  /** The server that holds the key's slot as its master now. */
  async masterOfKey(key: string): Promise<RedisServer> {
    return this.masterOf(await this.slotOf(key));
  }

  /** The replicas of a master, as the cluster lists them. */
  async replicasOf(master: RedisServer): Promise<RedisServer[]> {
    const nodes = await this.clusterNodes();
    const id = nodes.find((n) => n.port === master.port)?.id;
    const ports = new Set(nodes.filter((n) => n.masterId === id).map((n) => n.port));
    return this.servers.filter((s) => ports.has(s.port));
  }

  /** The nodes that are not running (killed). */
  stopped(): RedisServer[] {
    return this.servers.filter((s) => !s.running);
  }

  /** Kills a node with SIGKILL, by its pid (no shutdown, nothing flushed). */
  async kill(server: RedisServer): Promise<void> {
    await server.kill();
  }

  /**
   * Waits until every running node sees the slot served by a master other than `dead`, and
   * the cluster state ok: a replica of the dead master was promoted. Returns the new master.
   */
  async waitForPromotion(slot: number, dead: RedisServer, timeoutMs = 20000): Promise<RedisServer> {
    const promoted = await waitFor(
      `a replica promoted to master of slot ${slot}`,
      async () => {
        const views = await Promise.all(
          this.servers
            .filter((s) => s.running)
            .map(async (s) => {
              type Range = [number, number, [string, number, ...unknown[]], ...unknown[]];
              const ranges = await s.command<Range[]>('CLUSTER', 'SLOTS');
              const info = await s.command<string>('CLUSTER', 'INFO');
              const range = ranges.find(([from, to]) => from <= slot && slot <= to);
              return /cluster_state:ok/.test(info) ? range?.[2][1] : undefined;
            }),
        );
        const [port] = views;
        if (port === undefined || port === dead.port) return false;
        return views.every((p) => p === port) && this.servers.find((s) => s.port === port);
      },
      timeoutMs,
      20,
    );
    return promoted;
  }

  /**
   * Starts a killed node again on its port and data directory: it comes back empty, finds its
   * slots taken over, and joins as a replica of the master that replaced it (an operator's
   * "replace the dead node"). Waits until it is in sync.
   */
  async restart(server: RedisServer): Promise<void> {
    await server.launch();
    await this.waitHealthy(this.servers.length - (await this.masters()).length);
  }

  /**
   * Waits until every running node sees all slots covered and the cluster ok, and `replicas`
   * replicas are in sync with their master.
   */
  private async waitHealthy(replicas: number): Promise<void> {
    await waitFor(
      'every node to see the whole cluster, every replica in sync',
      async () => {
        const running = this.servers.filter((s) => s.running);
        const infos = await Promise.all(running.map((s) => s.command<string>('CLUSTER', 'INFO')));
        if (
          !infos.every(
            (info) => /cluster_state:ok/.test(info) && /cluster_slots_ok:16384/.test(info),
          )
        )
          return false;
        if (replicas === 0) return true;
        const repl = await Promise.all(
          running.map((s) => s.command<string>('INFO', 'replication')),
        );
        const synced = repl.filter(
          (r) =>
            /role:slave/.test(r) &&
            /master_link_status:up/.test(r) &&
            /master_sync_in_progress:0/.test(r),
        );
        return synced.length >= replicas;
      },
      30000,
      100,
    );
  }

  private anyRunning(): RedisServer {
    const server = this.servers.find((s) => s.running);
    if (!server) throw new Error('no node of the cluster is running');
    return server;
  }

  async stop(): Promise<void> {
    for (const client of this.clients.splice(0)) client.disconnect();
    await Promise.all(this.servers.map((s) => s.stop()));
  }
}
