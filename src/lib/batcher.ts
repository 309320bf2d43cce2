// Group commit: callers submit one item each and wait for its own result, while items that
// arrive during a flush are written together by the next one. Under light load a flush holds
// one item and adds no delay; under heavy load one round trip serves many callers.

export interface BatcherOptions {
  maxBatch: number;
  /** Flushes allowed at once; more lets the database overlap commits. */
  maxInFlight: number;
}

interface Waiting<I, O> {
  item: I;
  admit: (() => boolean) | undefined;
  resolve: (value: O) => void;
  reject: (reason: unknown) => void;
}

/** flush returns one entry per item, in order: its result, or an Error for that item alone. */
export type FlushFn<I, O> = (items: I[]) => Promise<Array<O | Error>>;

/** The rejection of an item its admit hook turned away. */
export class BatchDropped extends Error {
  constructor() {
    super('dropped before it was written');
    this.name = 'BatchDropped';
  }
}

export class Batcher<I, O> {
  private waiting: Array<Waiting<I, O>> = [];
  private inFlight = 0;
  private scheduled = false;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly flush: FlushFn<I, O>,
    private readonly options: BatcherOptions,
  ) {}

  /**
   * Queues an item for the next flush. `admit`, when given, is asked as the item is taken into
   * a flush: false drops it (its promise rejects with BatchDropped) and it is never written.
   */
  submit(item: I, admit?: () => boolean): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.waiting.push({ item, admit, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once every submitted item has been flushed (for shutdown). */
  idle(): Promise<void> {
    if (this.waiting.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.options.maxInFlight) return;
    this.scheduled = true;
    // setImmediate lets every request already read from the sockets join this batch.
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.waiting.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch = this.waiting.splice(0, this.options.maxBatch).filter((w) => {
        if (!w.admit || w.admit()) return true;
        w.reject(new BatchDropped());
        return false;
      });
      if (batch.length === 0) continue;
      this.inFlight++;
      this.run(batch).finally(() => {
        this.inFlight--;
        if (this.waiting.length > 0) this.schedule();
        else this.notifyIdle();
      });
    }
    this.notifyIdle(); // every item taken may have been dropped
  }

  private notifyIdle(): void {
    if (this.waiting.length === 0 && this.inFlight === 0) {
      this.idleWaiters.splice(0).forEach((done) => done());
    }
  }

  private async run(batch: Array<Waiting<I, O>>): Promise<void> {
    try {
      const results = await this.flush(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        const result = results[i];
        if (result instanceof Error) w.reject(result);
        else w.resolve(result as O);
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    }
  }
}
