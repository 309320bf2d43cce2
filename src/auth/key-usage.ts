// When each API key was last used (lastUsedAt), at no cost to the requests: an accepted
// request only notes the time in this process's memory, and the times noted are written in one
// UPDATE per interval (KEY_LAST_USED_FLUSH_MS, at most a minute) and once more at shutdown.
// A flush that fails is logged and its times are kept for the next one; a request never waits
// for it nor fails because of it. Several API processes write the same column: each writes the
// later of the stored time and its own, so lastUsedAt never moves backwards.
import type { Db } from '../db.js';
import { Periodic } from '../lib/periodic.js';
import type { Logger } from '../logger.js';

/** Keys per UPDATE: one statement per interval for any ordinary number of keys in use. */
const FLUSH_CHUNK = 500;

export class KeyUsage {
  /** Key id → the last time (ms) a request of this process was accepted with it. */
  private pending = new Map<string, number>();
  private readonly loop: Periodic;

  constructor(
    private readonly db: Db,
    intervalMs: number,
    private readonly log: Logger,
    private readonly timeoutMs = 5000,
  ) {
    this.loop = new Periodic(() => this.flush(), {
      intervalMs,
      onError: (err) => log.warn('recording when API keys were last used failed; retried', { err }),
    });
  }

  /** Notes a use; called on every accepted request, so it only touches memory. */
  record(keyId: string, at = Date.now()): void {
    this.pending.set(keyId, at);
  }

  start(): void {
    this.loop.start();
  }

  /** Stops the interval, then writes what is still noted (at shutdown). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.flush().catch((err: unknown) =>
      this.log.warn('the last uses of API keys could not be recorded at shutdown', { err }),
    );
  }

  /** Writes the uses noted since the last flush; on failure they are kept for the next one. */
  async flush(): Promise<number> {
    if (this.pending.size === 0) return 0;
    const taken = this.pending;
    this.pending = new Map();
    const entries = [...taken];
    try {
      for (let i = 0; i < entries.length; i += FLUSH_CHUNK) {
        const chunk = entries.slice(i, i + FLUSH_CHUNK);
        const cases = chunk.map(() => 'WHEN ? THEN ?').join(' ');
        const values = chunk.flatMap(([id, at]) => [id, new Date(at)]);
        await this.db
          .raw(
            `UPDATE api_keys
                SET last_used_at = GREATEST(COALESCE(last_used_at, '1000-01-01'), CASE id ${cases} END)
              WHERE id IN (${chunk.map(() => '?').join(', ')})`,
            [...values, ...chunk.map(([id]) => id)],
          )
          .timeout(this.timeoutMs);
        for (const [id] of chunk) taken.delete(id);
      }
    } catch (err) {
      // Kept for the next flush, unless a later use was noted meanwhile.
      for (const [id, at] of taken) {
        if ((this.pending.get(id) ?? 0) < at) this.pending.set(id, at);
      }
      throw err;
    }
    return entries.length;
  }
}
