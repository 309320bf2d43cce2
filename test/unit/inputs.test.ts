// Parsing of what callers and operators send: keys, cursors, config, template files.
import { expect } from 'chai';
import { keyFromHeader, generateApiKey, hashApiKey } from '../../src/auth/api-keys.js';
import { loadConfig } from '../../src/config.js';
import { DomainError } from '../../src/errors.js';
import { HttpError } from '../../src/http/errors.js';
import { parseQuery } from '../../src/http/contract.js';
import { decodeCursor, encodeCursor } from '../../src/http/pagination.js';
import { runSchemas } from '../../src/runs/run-schemas.js';
import { newId, isId } from '../../src/lib/ids.js';
import { parseTemplateDefinition } from '../../src/templates/definition/template-definition.js';

describe('inputs', () => {
  it('reads a key from Authorization as the key itself or "Bearer <key>"', () => {
    expect(keyFromHeader('wrs_abc')).to.equal('wrs_abc');
    expect(keyFromHeader('Bearer wrs_abc')).to.equal('wrs_abc');
    expect(keyFromHeader('bearer   wrs_abc ')).to.equal('wrs_abc');
    expect(keyFromHeader(undefined)).to.equal(undefined);
    expect(keyFromHeader('')).to.equal(undefined);
    expect(keyFromHeader('a b c')).to.equal(undefined);
    expect(keyFromHeader('x'.repeat(300))).to.equal(undefined);
  });

  it('makes keys with 192 random bits and a prefix, hashed with SHA-256', () => {
    const a = generateApiKey();
    expect(a).to.match(/^wrs_[A-Za-z0-9_-]{32}$/);
    expect(a).to.not.equal(generateApiKey());
    expect(hashApiKey('abc')).to.equal(
      'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    );
  });

  it('round-trips cursors and refuses anything else with a 400', () => {
    expect(decodeCursor(encodeCursor(12345))).to.equal(12345);
    for (const bad of [
      '',
      '!!',
      'eyJ4IjoxfQ',
      Buffer.from('{"s":-1}').toString('base64url'),
      Buffer.from('{"s":1.5}').toString('base64url'),
      'a'.repeat(300),
    ]) {
      expect(() => decodeCursor(bad), bad).to.throw(HttpError);
    }
  });

  it('bounds the page size through the list query schema', () => {
    const { listQuery } = runSchemas(loadConfig({}));
    expect(parseQuery(listQuery, {})).to.deep.equal({});
    expect(parseQuery(listQuery, { limit: '1000' })).to.deep.equal({ limit: 1000 });
    for (const limit of ['0', '1001', 'x', '-2', '', '1.5'])
      expect(() => parseQuery(listQuery, { limit }), limit).to.throw(DomainError, /limit/);
    expect(() => parseQuery(listQuery, { limit: ['1', '2'] })).to.throw(/only once/);
    expect(() => parseQuery(listQuery, { offset: '5' })).to.throw(/unknown query parameter/);
    expect(() => parseQuery(listQuery, { cursor: 'a b' })).to.throw(/cursor is not valid/);
    expect(() => parseQuery(undefined, { x: '1' })).to.throw(/unknown query parameter 'x'/);
  });

  it('reads config with defaults and names the variable that is wrong', () => {
    const config = loadConfig({});
    expect(config).to.include({
      port: 3000,
      basePath: '',
      listDefaultLimit: 100,
      listMaxLimit: 1000,
    });
    expect(loadConfig({ BASE_PATH: '/api/v1/' }).basePath).to.equal('/api/v1');
    expect(() => loadConfig({ PORT: 'eighty' })).to.throw(/PORT/);
    expect(() => loadConfig({ PORT: '70000' })).to.throw(/PORT/);
    expect(() => loadConfig({ DATABASE_URL: 'postgres://x/y' })).to.throw(/DATABASE_URL/);
    expect(() => loadConfig({ REDIS_URL: 'not a url' })).to.throw(/REDIS_URL/);
    expect(() => loadConfig({ BASE_PATH: 'api' })).to.throw(/BASE_PATH/);
    expect(() => loadConfig({ LOG_LEVEL: 'loud' })).to.throw(/LOG_LEVEL/);
  });

  it('reads REDIS_CLUSTER_NODES as host:port seeds, refusing anything else', () => {
    expect(loadConfig({}).redisClusterNodes).to.equal(undefined);
    expect(
      loadConfig({ REDIS_CLUSTER_NODES: 'redis-a:7000, 10.0.0.2:7001,[::1]:7002' })
        .redisClusterNodes,
    ).to.deep.equal([
      { host: 'redis-a', port: 7000 },
      { host: '10.0.0.2', port: 7001 },
      { host: '::1', port: 7002 },
    ]);
    for (const bad of ['redis-a', 'redis-a:0', 'redis-a:70000', 'a:1,,b:2', 'redis://a:1']) {
      expect(() => loadConfig({ REDIS_CLUSTER_NODES: bad }), bad).to.throw(/REDIS_CLUSTER_NODES/);
    }
  });

  it('makes time-ordered UUIDv7 ids', () => {
    const a = newId(1000);
    const b = newId(2000);
    expect(isId(a)).to.equal(true);
    expect(a[14]).to.equal('7');
    expect(a < b).to.equal(true);
  });

  it('checks template files', () => {
    expect(
      parseTemplateDefinition({ name: 'T', pages: [{ name: 'P', inputFields: [] }] }),
    ).to.deep.equal({ name: 'T', pages: [{ name: 'P', inputFields: [] }] });
    const refusal = (v: unknown) => {
      try {
        parseTemplateDefinition(v);
      } catch (err) {
        if (err instanceof DomainError) return err;
        throw err;
      }
      throw new Error('accepted');
    };
    const bad = (v: unknown) => refusal(v).message;
    expect(bad({ name: 'T' })).to.match(/missing required field 'pages'/);
    expect(bad({ name: 'T', pages: [{ name: 'P', inputFields: [], extra: 1 }] })).to.match(
      /unexpected field 'pages.0.extra'/,
    );
    expect(
      bad({
        name: 'T',
        pages: [{ name: 'P', inputFields: [{ inputId: 'a', fieldName: 'A', required: 'yes' }] }],
      }),
    ).to.match(/required must be a boolean/);
    const pages = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ name: `P${i}`, inputFields: [] }));
    expect(bad({ name: 'T', pages: pages(201) })).to.match(/pages must NOT have more than 200/);
    expect(parseTemplateDefinition({ name: 'T', pages: pages(200) }).pages).to.have.length(200);
    const fields = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ inputId: `f${i}`, fieldName: 'F' }));
    expect(bad({ name: 'T', pages: [{ name: 'P', inputFields: fields(1001) }] })).to.match(
      /inputFields must NOT have more than 1000/,
    );
    expect(bad({ name: 'x'.repeat(256), pages: pages(1) })).to.match(/name must be at most 255/);
    const twice = refusal({
      name: 'T',
      pages: [
        { name: 'A', inputFields: [{ inputId: 'a', fieldName: 'A' }] },
        { name: 'B', inputFields: [{ inputId: 'b', fieldName: 'B' }] },
        { name: 'A', inputFields: [] },
      ],
    });
    expect([twice.code, twice.field]).to.deep.equal(['duplicate_page_name', '/pages/2/name']);
    const input = refusal({
      name: 'T',
      pages: [
        { name: 'A', inputFields: [{ inputId: 'a', fieldName: 'A' }] },
        { name: 'B', inputFields: [{ inputId: 'a', fieldName: 'B' }] },
      ],
    });
    expect([input.code, input.field]).to.deep.equal([
      'duplicate_input_id',
      '/pages/1/inputFields/0/inputId',
    ]);
  });
});
