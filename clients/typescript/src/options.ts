// What a caller can set: for the client as a whole, and per call.

/** How the client sends requests. */
export interface ClientOptions {
  /** Where the service is, with its BASE_PATH if it has one: `https://wrs.example.com/api`. */
  baseUrl: string;
  /** The API key, sent in the Authorization header and nowhere else. */
  apiKey: string;
  /**
   * Retries after a connection error, a time-out, 429, 503 or 500 `outcome_unknown` (default 3,
   * so at most 4 attempts). 0 turns retrying off.
   */
  maxRetries?: number;
  /** Each attempt's time limit, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /**
   * The longest wait before a retry, in milliseconds (default 8,000). A 429 whose Retry-After
   * asks for longer is not retried: its error says when to come back.
   */
  maxRetryDelayMs?: number;
  /** The fetch to use (default: the global one): for tests, proxies or instrumentation. */
  fetch?: typeof fetch;
  /** Headers sent with every request (User-Agent, tracing), under the client's own. */
  headers?: Record<string, string>;
}

/** Per call. */
export interface CallOptions {
  /**
   * The POST's Idempotency-Key. Default: a new random one per call, reused by each of its
   * retries. Pass your own to retry a call later (after a crash, say) with the same effect once.
   */
  idempotencyKey?: string;
  /** Aborts the call, its retries and their waits. */
  signal?: AbortSignal;
  /** Overrides the client's maxRetries for this call. */
  maxRetries?: number;
  /** Overrides the client's timeoutMs for this call. */
  timeoutMs?: number;
}

/** For a live stream. */
export interface StreamOptions {
  /** Ends the stream: the iterator returns. */
  signal?: AbortSignal;
  /** Resume after this event id (what a previous stream's last event carried as `id`). */
  lastEventId?: string;
  /**
   * Reconnections in a row that may fail before the stream gives up with the last error
   * (default: never give up). A connection that delivers its opening message resets the count.
   */
  maxReconnects?: number;
  /**
   * Told when the stream connects (true: the service placed it) and when it drops (false, with
   * why): for a screen that shows whether it is live. The iterator reconnects by itself.
   */
  onConnectionChange?: (connected: boolean, error?: unknown) => void;
}
