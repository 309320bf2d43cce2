import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { healthOf, mayBeWriterTrouble } from '../../src/db-nodes.js';

const rows = (values: Record<string, string>) => [
  Object.entries(values).map(([Variable_name, Value]) => ({ Variable_name, Value })),
];

describe('database nodes: settings and health', () => {
  it('DATABASE_NODES: unset means DATABASE_URL alone; a list is read in its order', () => {
    expect(loadConfig({}).databaseNodes).to.equal(undefined);
    const config = loadConfig({
      DATABASE_NODES: 'db1:3306, 10.0.0.2:3307,[::1]:3308',
      DATABASE_CHECK_INTERVAL_MS: '200',
    });
    expect(config.databaseNodes).to.deep.equal([
      { host: 'db1', port: 3306 },
      { host: '10.0.0.2', port: 3307 },
      { host: '::1', port: 3308 },
    ]);
    expect(config.databaseCheckIntervalMs).to.equal(200);
    expect(loadConfig({}).databaseCheckIntervalMs).to.equal(1000);
  });

  it('refuses a node without a port, and a check interval out of range', () => {
    expect(() => loadConfig({ DATABASE_NODES: 'db1:3306,db2' })).to.throw(
      ConfigError,
      /DATABASE_NODES must be host:port/,
    );
    expect(() => loadConfig({ DATABASE_CHECK_INTERVAL_MS: '10' })).to.throw(
      ConfigError,
      /DATABASE_CHECK_INTERVAL_MS/,
    );
  });

  it('a Galera node takes writes only when ready, in the primary component and synced', () => {
    const synced = {
      wsrep_on: 'ON',
      wsrep_ready: 'ON',
      wsrep_cluster_status: 'Primary',
      wsrep_local_state: '4',
      wsrep_local_state_comment: 'Synced',
    };
    expect(healthOf(rows(synced))).to.deep.equal({ ok: true, galera: true });
    expect(healthOf(rows({ ...synced, wsrep_ready: 'OFF' }))).to.deep.include({
      ok: false,
      galera: true,
    });
    expect(healthOf(rows({ ...synced, wsrep_cluster_status: 'non-Primary' }))).to.deep.equal({
      ok: false,
      galera: true,
      why: 'not in the primary component (wsrep_cluster_status non-Primary)',
    });
    expect(
      healthOf(
        rows({ ...synced, wsrep_local_state: '2', wsrep_local_state_comment: 'Donor/Desynced' }),
      ),
    ).to.deep.equal({ ok: false, galera: true, why: 'not synced (Donor/Desynced)' });
    // A server without Galera (its wsrep status reads Disconnected): it takes writes.
    expect(
      healthOf(rows({ wsrep_on: 'OFF', wsrep_ready: 'OFF', wsrep_cluster_status: 'Disconnected' })),
    ).to.deep.equal({ ok: true, galera: false });
  });

  it('the errors that send a process to check its writer at once', () => {
    const error = (fields: Record<string, unknown>) => Object.assign(new Error('x'), fields);
    expect(mayBeWriterTrouble(error({ code: 'ECONNREFUSED' }))).to.equal(true);
    expect(mayBeWriterTrouble(error({ code: 'PROTOCOL_CONNECTION_LOST', fatal: true }))).to.equal(
      true,
    );
    expect(mayBeWriterTrouble(error({ code: 'ER_UNKNOWN_COM_ERROR', errno: 1047 }))).to.equal(true);
    expect(mayBeWriterTrouble(error({ code: 'ER_ERROR_DURING_COMMIT' }))).to.equal(true);
    expect(
      mayBeWriterTrouble(Object.assign(new Error('x'), { name: 'KnexTimeoutError' })),
    ).to.equal(true);
    // The data's own errors say nothing of the node.
    expect(mayBeWriterTrouble(error({ code: 'ER_DUP_ENTRY' }))).to.equal(false);
    expect(mayBeWriterTrouble(error({ code: 'ER_LOCK_DEADLOCK' }))).to.equal(false);
    expect(mayBeWriterTrouble('a string')).to.equal(false);
  });
});
