import { Writable } from 'node:stream';
import { expect } from 'chai';
import { createLogger } from '../../src/logger.js';

/** A logger writing into an array of parsed lines. */
function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { lines, stream };
}

describe('logger (pino)', () => {
  it('writes one JSON line per event: level as a word, ISO time, message, fields', async () => {
    const { lines, stream } = capture();
    const log = createLogger('info', { proc: 'test' }, stream);
    log.debug('hidden');
    log.info('request', { requestId: 'r1', status: 200 });
    log.child({ component: 'x' }).warn('careful', { err: new Error('boom') });
    await new Promise((r) => setImmediate(r));
    expect(lines).to.have.length(2);
    expect(lines[0]).to.include({ level: 'info', msg: 'request', proc: 'test', requestId: 'r1' });
    expect(new Date(lines[0]!.time as string).toISOString()).to.equal(lines[0]!.time);
    expect(lines[1]).to.include({ level: 'warn', component: 'x', err: 'boom', errName: 'Error' });
  });

  it('redacts credentials wherever a caller put them', async () => {
    const { lines, stream } = capture();
    const log = createLogger('info', {}, stream);
    log.info('oops', {
      authorization: 'wrs_secret1',
      key: 'wrs_secret2',
      headers: { authorization: 'Bearer wrs_secret3' },
      token: 'secret4',
      password: 'secret5',
    });
    await new Promise((r) => setImmediate(r));
    const text = JSON.stringify(lines);
    for (const secret of ['wrs_secret1', 'wrs_secret2', 'wrs_secret3', 'secret4', 'secret5']) {
      expect(text).not.to.include(secret);
    }
    expect(lines[0]).to.include({ authorization: '[redacted]', key: '[redacted]' });
  });
});
