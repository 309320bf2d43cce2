// The dispatcher's passes, with a store whose passes the test ends when it likes (no I/O: the
// relay's SQL is integration/delivery-store's): a wake that comes while a pass runs, its first
// among them, is followed by another pass, not left for the interval.
import { expect } from 'chai';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/logger.js';
import { Dispatcher } from '../../src/webhooks/dispatcher.js';
import type { DispatchPass } from '../../src/webhooks/outbox-store.js';
import { waitFor } from '../support/wait.js';

/** A relay whose passes end when the test says, each finding what the test gives it. */
class HeldRelay {
  calls = 0;
  private ends: Array<(pass: DispatchPass) => void> = [];

  dispatch(): Promise<DispatchPass> {
    this.calls++;
    return new Promise((resolve) => this.ends.push(resolve));
  }

  end(pass: DispatchPass): void {
    for (const end of this.ends.splice(0)) end(pass);
  }
}

const NOTHING: DispatchPass = { subscribed: true, events: 0, made: 0, endpoints: [] };
const quiet = createLogger(
  'error',
  {},
  new Writable({ write: (_chunk, _encoding, done) => done() }),
);

describe('Dispatcher', () => {
  // A pass a minute: only a wake makes another one within a test.
  const setup = () => {
    const relay = new HeldRelay();
    const dispatcher = new Dispatcher(relay, { enqueue: async () => true }, 60_000, quiet);
    return { relay, dispatcher };
  };

  it('follows its first pass with another when woken while it runs', async () => {
    const { relay, dispatcher } = setup();
    dispatcher.start();
    await waitFor('first pass', () => relay.calls === 1, 2000, 1);
    dispatcher.wake(); // this worker committed events while its first pass read
    relay.end(NOTHING);
    await waitFor('a second pass', () => relay.calls === 2, 2000, 1);
    relay.end(NOTHING);
    await dispatcher.stop();
  });

  it('drops wakes once a pass found no endpoint anywhere', async () => {
    const { relay, dispatcher } = setup();
    dispatcher.start();
    await waitFor('first pass', () => relay.calls === 1, 2000, 1);
    relay.end({ ...NOTHING, subscribed: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    dispatcher.wake();
    dispatcher.signalled();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(relay.calls).to.equal(1); // nobody subscribed: a change costs no pass
    await dispatcher.stop();
  });
});
