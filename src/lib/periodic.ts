// A pass that runs again and again: an interval after the last pass ended (never two at once,
// however long a pass takes), at once on wake (or within a time: wakes that come closer
// together than it share one pass), and no more once stopped. The webhook dispatcher and the
// reconciler run on it.

/** The timers a loop uses: the global ones, or a test's fake clock. */
export interface Timers {
  setTimeout(run: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Milliseconds on a clock that only moves forward. */
  now(): number;
}

const GLOBAL_TIMERS: Timers = {
  setTimeout: (run, ms) => setTimeout(run, ms),
  now: () => performance.now(),
  // The only handles given back here are the ones setTimeout above made.
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout | undefined),
};

export interface PeriodicOptions {
  intervalMs: number;
  /** A pass that threw: the loop goes on at the next interval. */
  onError: (err: unknown) => void;
  timers?: Timers;
}

export class Periodic {
  private readonly timers: Timers;
  private timer: unknown;
  /** When the scheduled pass starts (timers.now()); undefined while a pass runs. */
  private dueAt: number | undefined;
  private running: Promise<void> | undefined;
  private state: 'new' | 'started' | 'stopped' = 'new';
  /** Wakes came while a pass ran: another pass follows it, after the least of their times. */
  private again: number | undefined;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly options: PeriodicOptions,
  ) {
    this.timers = options.timers ?? GLOBAL_TIMERS;
  }

  /** Set by stop: a long pass may end early (the next pass, in another process, goes on). */
  get stopping(): boolean {
    return this.state === 'stopped';
  }

  /** The first pass comes after firstDelayMs (an interval unless given). */
  start(firstDelayMs = this.options.intervalMs): void {
    if (this.state !== 'new') return;
    this.state = 'started';
    this.schedule(firstDelayMs);
  }

  /**
   * Runs a pass within `withinMs`: now (0), or when that time has passed, unless one is due
   * sooner; while a pass runs, that long after it ends. Before start or after stop, nothing.
   */
  wake(withinMs = 0): void {
    if (this.state !== 'started') return;
    if (this.running) {
      this.again = Math.min(this.again ?? withinMs, withinMs);
      return;
    }
    if (this.dueAt !== undefined && this.dueAt <= this.timers.now() + withinMs) return;
    this.timers.clearTimeout(this.timer);
    this.schedule(withinMs);
  }

  /** No pass starts any more; resolves once the running one (if any) has ended. */
  async stop(): Promise<void> {
    this.state = 'stopped';
    this.timers.clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    this.dueAt = this.timers.now() + delayMs;
    this.timer = this.timers.setTimeout(() => this.run(), delayMs);
  }

  private run(): void {
    this.dueAt = undefined;
    // Running from before the pass is called: a pass that wakes its own loop before its first
    // await (a wait it asks for) is a wake while a pass runs, not a second timer beside the one
    // its end sets (which made passes run two and more at once).
    let ended!: () => void;
    this.running = new Promise<void>((resolve) => (ended = resolve));
    void this.runPass().then(() => {
      this.running = undefined;
      if (this.state === 'started') {
        const again = this.again;
        this.again = undefined;
        this.schedule(again ?? this.options.intervalMs);
      }
      ended();
    });
  }

  private async runPass(): Promise<void> {
    try {
      await this.pass();
    } catch (err) {
      this.options.onError(err);
    }
  }
}
