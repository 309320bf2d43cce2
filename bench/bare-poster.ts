// The webhook phase's bare POST loop, run as a child process: a process of its own that
// posts signed bodies to the receiver, as the service's worker is a process of its own that
// delivers to it. (In the bench's own process, the loop and the receiver would share one event
// loop, and no request or answer would wake another process: a cost the service's worker
// always pays and such a loop never would.) It takes one run per line of stdin (JSON
// BareOptions) and answers each with a RESULT line; it ends when its stdin closes.
import { Agent } from 'node:http';
import { barePost, inPool } from './bare-post.js';
import { serveRequests } from './child.js';

export interface BareOptions {
  url: string;
  secret: string;
  /** Bodies to post, `concurrency` at a time; each gets the webhook-id `bare_<label>_<i>`. */
  count: number;
  concurrency: number;
  label: string;
  body: string;
}

export interface BareResult {
  ms: number;
}

async function run(options: BareOptions): Promise<BareResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const start = Date.now();
  await inPool(options.count, options.concurrency, (i) =>
    barePost(options.url, agent, options.secret, `bare_${options.label}_${i}`, options.body),
  );
  const ms = Date.now() - start;
  agent.destroy();
  return { ms };
}

serveRequests<BareOptions>(run);
