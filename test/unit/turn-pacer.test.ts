import { expect } from 'chai';
import { TurnPacer } from '../../workers/turn-pacer.js';

describe('TurnPacer', () => {
  it('lets a turn begin at once when the organization had none within gatherMs', () => {
    const pacer = new TurnPacer(4);
    expect(pacer.wait('a', 1000)).to.equal(0);
    expect(pacer.wait('a', 1004)).to.equal(0);
    expect(pacer.wait('a', 2000)).to.equal(0);
  });

  it('makes a turn that comes sooner wait out the rest of gatherMs after the last began', () => {
    const pacer = new TurnPacer(4);
    expect(pacer.wait('a', 1000)).to.equal(0);
    expect(pacer.wait('a', 1001)).to.equal(3);
    // That turn began at 1004: the next waits for 1008.
    expect(pacer.wait('a', 1005)).to.equal(3);
  });

  it('paces each organization on its own', () => {
    const pacer = new TurnPacer(4);
    expect(pacer.wait('a', 1000)).to.equal(0);
    expect(pacer.wait('b', 1001)).to.equal(0);
    expect(pacer.wait('a', 1002)).to.equal(2);
  });

  it('never waits when gatherMs is 0', () => {
    const pacer = new TurnPacer(0);
    expect(pacer.wait('a', 1000)).to.equal(0);
    expect(pacer.wait('a', 1000)).to.equal(0);
  });

  it('keeps at most maxEntries organizations once the oldest are stale, still pacing the recent', () => {
    const pacer = new TurnPacer(4, 3);
    pacer.wait('a', 1000);
    pacer.wait('b', 1001);
    pacer.wait('c', 1010);
    // a and b are stale at 1010 and are dropped; c still paces.
    pacer.wait('d', 1010);
    expect(pacer.wait('c', 1011)).to.equal(3);
    expect(pacer.wait('a', 1011)).to.equal(0);
  });
});
