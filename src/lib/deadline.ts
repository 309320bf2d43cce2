// The promise behind "a client told that a request failed can rely on nothing having been done".
// A request's time runs out in one of two ways, and which one is decided in one place:
//   - before its write was sent to MySQL: it is answered 503 and the write is never sent;
//   - after: the answer waits for MySQL's outcome (bounded by the write itself, see db.ts).
// JavaScript runs one callback at a time, so "expire" and "begin the write" cannot interleave:
// whichever comes first wins, and the other learns it.

import { DomainError } from '../errors.js';

export type DeadlineState = 'open' | 'writing' | 'expired';

/** What a writer needs of a deadline: permission to send its write. */
export interface WriteGate {
  beginWrite(): boolean;
}

export class Deadline implements WriteGate {
  private current: DeadlineState = 'open';

  get state(): DeadlineState {
    return this.current;
  }

  /**
   * The time is up. True when the request may be answered as failed (its write was never
   * sent, and now never will be); false when its write is already on its way.
   */
  expire(): boolean {
    if (this.current === 'writing') return false;
    this.current = 'expired';
    return true;
  }

  /**
   * The write is about to be sent. True when it may go (from now on the answer waits for its
   * outcome); false when the request has already been answered as failed.
   */
  beginWrite(): boolean {
    if (this.current === 'expired') return false;
    this.current = 'writing';
    return true;
  }
}

/**
 * Asks the gate for the request's write, just before it is sent; refused, the request is
 * answered timed_out (503) and nothing is written.
 */
export function beginWrite(gate: WriteGate): void {
  if (!gate.beginWrite()) {
    throw new DomainError('timed_out', 'request timed out before it was stored');
  }
}

/** For writes made outside a request (the CLI, tests): never expires first. */
export const NO_DEADLINE: WriteGate = { beginWrite: () => true };
