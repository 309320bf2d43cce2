import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { covers, parsePosition } from '../../src/db-replicas.js';

describe('replica settings and GTID positions', () => {
  it('DATABASE_REPLICA_URLS: unset means no replicas; a list is read with its bounds', () => {
    expect(loadConfig({}).replicas).to.equal(undefined);
    expect(loadConfig({ DATABASE_REPLICA_URLS: ' ' }).replicas).to.equal(undefined);
    const replicas = loadConfig({
      DATABASE_REPLICA_URLS: 'mysql://r@10.0.0.2:3306/wrs, mysql://r@10.0.0.3/wrs',
      REPLICA_WAIT_MS: '80',
    }).replicas;
    expect(replicas?.urls).to.deep.equal(['mysql://r@10.0.0.2:3306/wrs', 'mysql://r@10.0.0.3/wrs']);
    expect(replicas).to.include({ waitMs: 80, maxLagMs: 1000, checkIntervalMs: 1000, poolMax: 5 });
  });

  it('refuses a replica URL that is not mysql://, and bounds out of range', () => {
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'mysql://a/wrs,redis://b' })).to.throw(
      ConfigError,
      /DATABASE_REPLICA_URLS \(entry 2\)/,
    );
    expect(() => loadConfig({ DATABASE_REPLICA_URLS: 'mysql://a/wrs,' })).to.throw(ConfigError);
    expect(() =>
      loadConfig({ DATABASE_REPLICA_URLS: 'mysql://a/wrs', REPLICA_WAIT_MS: '0' }),
    ).to.throw(ConfigError, /REPLICA_WAIT_MS/);
  });

  it('a position covers another when every domain of the other is reached', () => {
    const have = parsePosition('0-1-120,1-2-7');
    expect(covers(have, parsePosition('0-1-120'))).to.equal(true);
    expect(covers(have, parsePosition('0-3-119,1-2-7'))).to.equal(true);
    expect(covers(have, parsePosition('0-1-121'))).to.equal(false);
    expect(covers(have, parsePosition('2-1-1'))).to.equal(false);
    expect(covers(new Map(), parsePosition(''))).to.equal(true);
  });
});
