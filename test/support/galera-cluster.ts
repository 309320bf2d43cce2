// A MariaDB Galera cluster of its own on this machine, for the Galera pass, its drills and the
// bench: one mariadbd per node (mariadb-server.ts), each with its own data directory, client
// port, group port (gmcast), incremental-transfer port (IST) and rsync state-transfer port
// (SST). The first node bootstraps the cluster; the others join it by a state transfer. Nodes
// are killed, isolated and started again by pid, one at a time or all of them; `npm run
// galera` runs one for an operator (galera-cli.ts).
//
// Durability is the server's default (innodb_flush_log_at_trx_commit=1): the cluster is measured
// beside the single server as a deployment would run it. Galera's own settings are the ones it
// requires (ROW binary log format, interleaved auto-increment locks), and ids numbered one by one
// for a single writer (wsrep_auto_increment_control off: see join()); the group's failure
// detection is shortened (suspect after 2 s, evict after 4 s instead of 5 s and 15 s) so that a
// drill's node loss is decided in seconds: it is a liveness setting, not a durability one.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { MariadbServer, mariadbMissing } from './mariadb-server.js';
import { freePort } from './processes.js';

const PROVIDER = process.env.GALERA_PROVIDER || '/usr/lib/galera/libgalera_smm.so';

/**
 * The user the nodes run as: the machine's `mysql` when the tests run as root. The rsync state
 * transfer's daemon, started by the joining node, runs as that node's user; a daemon started
 * by root drops to `nobody`, which cannot write the node's data directory.
 */
const NODE_USER = process.getuid?.() === 0 ? 'mysql' : userInfo().username;

/** Why a cluster cannot be started here (a binary or the provider missing), or undefined. */
export function galeraMissing(): string | undefined {
  const missing = mariadbMissing(['rsync', 'wsrep_sst_rsync']);
  if (missing) return missing;
  if (!existsSync(PROVIDER)) return `the Galera provider ${PROVIDER} not found (galera-4)`;
  return undefined;
}

/** What every node runs with, and the lone server set beside the cluster (startLoneServer). */
const SERVER_OPTIONS = ['--innodb-buffer-pool-size=128M'];

/**
 * One server run as the nodes are, without Galera: the cluster's baseline on this machine (the
 * bench's Galera phase). Its database is made as the cluster's is.
 */
export async function startLoneServer(
  database = 'wrs',
): Promise<{ server: MariadbServer; url: string; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'wrs-lone-'));
  chmodSync(dir, 0o755);
  const server = new MariadbServer('lone', join(dir, 'server'), await freePort(), NODE_USER);
  const stop = async () => {
    await server.stop('SIGTERM');
    if (!process.env.TEST_KEEP_DATA) rmSync(dir, { recursive: true, force: true });
  };
  try {
    server.install();
    await server.start(SERVER_OPTIONS);
    server.sql(createDatabase(database));
  } catch (err) {
    await stop();
    throw err;
  }
  return { server, url: `mysql://root@127.0.0.1:${server.port}/${database}`, stop };
}

/** As the service's own ensureDatabase makes it (a server's default is latin1). */
const createDatabase = (name: string) =>
  `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`;

/** What a node says of itself (wsrep status). */
export interface NodeState {
  /** wsrep_ready: it takes queries. */
  ready: boolean;
  /** wsrep_cluster_status: Primary, non-Primary or Disconnected. */
  clusterStatus: string;
  clusterSize: number;
  /** wsrep_local_state_comment: Synced, Donor/Desynced, Joining, … */
  localState: string;
}

export class GaleraNode extends MariadbServer {
  constructor(
    readonly index: number,
    dir: string,
    port: number,
    readonly groupPort: number,
    readonly istPort: number,
    readonly sstPort: number,
  ) {
    super(`galera-${index + 1}`, dir, port, NODE_USER);
  }

  /**
   * Starts the node: a new cluster (bootstrap) or a member joining `members` (the group ports
   * to look for the others at). Resolves once it answers queries (synced with the cluster).
   */
  join(cluster: string, members: readonly number[], bootstrap: boolean): Promise<void> {
    const options = [
      `gmcast.listen_addr=tcp://127.0.0.1:${this.groupPort}`,
      `ist.recv_addr=127.0.0.1:${this.istPort}`,
      'gcache.size=64M',
      'evs.suspect_timeout=PT2S',
      'evs.inactive_timeout=PT4S',
      'evs.inactive_check_period=PT0.5S',
      'evs.keepalive_period=PT0.5S',
      'evs.install_timeout=PT4S',
    ].join(';');
    return this.start(
      [
        ...SERVER_OPTIONS,
        '--binlog-format=ROW',
        '--innodb-autoinc-lock-mode=2',
        // One writer at a time: ids stepping by one, as on a single server. Galera's default
        // steps them by the cluster's size, a different offset per node (for writes on every
        // node), which leaves two gaps after each id; the streams, webhooks and insights read
        // events behind a watermark that waits out every gap (an open transaction's id).
        '--wsrep-auto-increment-control=OFF',
        '--auto-increment-increment=1',
        '--auto-increment-offset=1',
        '--wsrep-on=ON',
        `--wsrep-provider=${PROVIDER}`,
        `--wsrep-cluster-name=${cluster}`,
        `--wsrep-cluster-address=gcomm://${members.map((p) => `127.0.0.1:${p}`).join(',')}`,
        `--wsrep-node-name=${this.name}`,
        '--wsrep-node-address=127.0.0.1',
        `--wsrep-provider-options=${options}`,
        '--wsrep-sst-method=rsync',
        `--wsrep-sst-receive-address=127.0.0.1:${this.sstPort}`,
        ...(bootstrap ? ['--wsrep-new-cluster'] : []),
      ],
      () => {
        const state = this.stateOrUndefined();
        return state?.ready === true && state.localState === 'Synced';
      },
      60000,
    );
  }

  /** The node's wsrep state, or undefined when it does not answer. */
  stateOrUndefined(): NodeState | undefined {
    if (!this.alive) return undefined;
    let text: string;
    try {
      text = this.sql(
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('wsrep_ready', 'wsrep_cluster_status', " +
          "'wsrep_cluster_size', 'wsrep_local_state_comment')",
      );
    } catch {
      return undefined;
    }
    const status = new Map(
      text.split('\n').map((line) => line.split('\t') as [string, string | undefined]),
    );
    return {
      ready: status.get('wsrep_ready') === 'ON',
      clusterStatus: status.get('wsrep_cluster_status') ?? '',
      clusterSize: Number(status.get('wsrep_cluster_size') ?? 0),
      localState: status.get('wsrep_local_state_comment') ?? '',
    };
  }
}

export interface GaleraOptions {
  nodes?: number;
  /** Where the nodes' directories go (a new temporary directory by default). */
  dir?: string;
  database?: string;
}

export class GaleraCluster {
  private constructor(
    readonly dir: string,
    readonly name: string,
    readonly nodes: GaleraNode[],
    readonly database: string,
    private readonly ownsDir: boolean,
  ) {}

  /** Installs and starts every node (the first bootstraps), and creates the database. */
  static async start(options: GaleraOptions = {}): Promise<GaleraCluster> {
    const { nodes: count = 3, database = 'wrs' } = options;
    const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'wrs-galera-'));
    mkdirSync(dir, { recursive: true });
    chmodSync(dir, 0o755); // the nodes' user goes through it
    const taken = new Set<number>();
    const port = async () => {
      for (;;) {
        const p = await freePort();
        if (!taken.has(p)) {
          taken.add(p);
          return p;
        }
      }
    };
    const nodes: GaleraNode[] = [];
    for (let i = 0; i < count; i++) {
      nodes.push(
        new GaleraNode(
          i,
          join(dir, `node${i + 1}`),
          await port(),
          await port(),
          await port(),
          await port(),
        ),
      );
    }
    const name = `wrs-galera-${process.pid}-${Date.now()}`;
    const cluster = new GaleraCluster(dir, name, nodes, database, options.dir === undefined);
    try {
      for (const node of nodes) node.install();
      await nodes[0]!.join(name, cluster.members, true);
      // One joiner at a time: each takes its state transfer from a synced donor.
      for (const node of nodes.slice(1)) await node.join(name, cluster.members, false);
      nodes[0]!.sql(createDatabase(database));
      return cluster;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  }

  /** The group ports of every node: where a starting node looks for the others. */
  get members(): number[] {
    return this.nodes.map((node) => node.groupPort);
  }

  /** A node's URL, as DATABASE_URL takes it. */
  url(index: number): string {
    return `mysql://root@127.0.0.1:${this.nodes[index]!.port}/${this.database}`;
  }

  /** What the service is given to write to one node of the cluster and fail over to the next. */
  get env(): { DATABASE_URL: string; DATABASE_NODES: string } {
    return {
      DATABASE_URL: this.url(0),
      DATABASE_NODES: this.nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    };
  }

  /** Every node's URL, the first first. */
  get urls(): string[] {
    return this.nodes.map((_, i) => this.url(i));
  }

  async kill(index: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.nodes[index]!.stop(signal);
  }

  /** Starts a stopped node again: it joins the others (an incremental transfer if it can). */
  async rejoin(index: number): Promise<void> {
    await this.nodes[index]!.join(this.name, this.members, false);
  }

  /**
   * Makes a node that lost its quorum the primary component again (the operator's step after
   * losing a majority): pc.bootstrap on the running node.
   */
  bootstrap(index: number): void {
    this.nodes[index]!.sql("SET GLOBAL wsrep_provider_options = 'pc.bootstrap=YES'");
  }

  /** Cuts a node off the group (on) or lets it back (off), its process left running. */
  isolate(index: number, on: boolean): void {
    this.nodes[index]!.sql(`SET GLOBAL wsrep_provider_options = 'gmcast.isolate=${on ? 1 : 0}'`);
  }

  /** Stops every node cleanly (SIGTERM), one at a time, the first last. */
  async stopAll(): Promise<void> {
    for (const node of [...this.nodes].reverse()) await node.stop('SIGTERM');
  }

  /**
   * Starts a stopped cluster again: the first node, the last to stop (stopAll), holds every
   * commit (its grastate.dat says safe_to_bootstrap), so it bootstraps and the others join it.
   */
  async startAll(): Promise<void> {
    await this.nodes[0]!.join(this.name, this.members, true);
    for (const node of this.nodes.slice(1)) await node.join(this.name, this.members, false);
  }

  /** Waits until every running node says it is synced in a primary component of `size`. */
  async waitForSize(size: number, timeoutMs = 60000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const states = this.nodes.filter((n) => n.alive).map((n) => n.stateOrUndefined());
      if (
        states.length >= size &&
        states.every(
          (s) =>
            s?.ready &&
            s.clusterStatus === 'Primary' &&
            s.clusterSize === size &&
            s.localState === 'Synced',
        )
      ) {
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`the cluster did not settle at ${size} nodes: ${JSON.stringify(states)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop('SIGTERM')));
    if (this.ownsDir && !process.env.TEST_KEEP_DATA) {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
