import { expect } from 'chai';
import { Deadline } from '../../src/lib/deadline.js';

describe('Deadline', () => {
  it('lets the request fail only while its write has not been sent', () => {
    const early = new Deadline();
    expect(early.expire()).to.equal(true);
    expect(early.beginWrite(), 'a write after the 503').to.equal(false);
    expect(early.state).to.equal('expired');

    const late = new Deadline();
    expect(late.beginWrite()).to.equal(true);
    expect(late.expire(), 'a 503 after the write was sent').to.equal(false);
    expect(late.state).to.equal('writing');
  });
});
