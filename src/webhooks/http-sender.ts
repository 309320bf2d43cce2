// One attempt of a delivery: a POST with the signed body, bounded in time, following no
// redirect, reading at most the first 1 KB of the answer (for the delivery log) and nothing
// more. The receiver's name is resolved here and every address it resolves to is checked
// (url-policy.ts) before a connection is made to one of them, so a name that points inside is
// refused at the moment it would be used, and the address checked is the one connected to.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { hostOf, isInternalAddress, type UrlPolicy } from './url-policy.js';

/** What one attempt came to; statusCode is absent when no HTTP answer came. */
export interface AttemptResult {
  statusCode?: number;
  latencyMs: number;
  /** The first RESPONSE_LOG_BYTES of the answer's body. */
  responseBody?: string;
  error?: string;
}

export const RESPONSE_LOG_BYTES = 1024;

const USER_AGENT = 'workflow-run-service-webhooks/1';

// Connections to receivers are kept alive between attempts: a receiver that takes many
// events pays for TLS once, not per event.
const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: 64 }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: 64 }),
};

class RefusedAddressError extends Error {}

/** dns.lookup, refusing a name any of whose addresses is internal. */
function guardedLookup(policy: UrlPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const inside = policy.allowPrivate
        ? undefined
        : addresses.find((a) => isInternalAddress(a.address));
      if (inside) {
        return callback(
          new RefusedAddressError(
            `refused: ${hostname} resolves to an internal address (${inside.address})`,
          ),
          '',
          0,
        );
      }
      if (options.all) return (callback as unknown as AllCallback)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(new Error(`${hostname} has no address`), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
type AllCallback = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

function describe(err: unknown): string {
  if (err instanceof RefusedAddressError) return err.message;
  const e = err as NodeJS.ErrnoException;
  return (e.code ? `${e.code}: ` : '') + (e.message || String(err));
}

export function postWebhook(
  rawUrl: string,
  headers: Record<string, string>,
  body: string,
  options: { timeoutMs: number; policy: UrlPolicy },
): Promise<AttemptResult> {
  const started = performance.now();
  const latency = () => Math.round(performance.now() - started);
  const url = new URL(rawUrl);
  const host = hostOf(url);
  if (!options.policy.allowPrivate && isIP(host) && isInternalAddress(host)) {
    return Promise.resolve({
      latencyMs: 0,
      error: `refused: ${host} is an internal address`,
    });
  }
  const https = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'latencyMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...result, latencyMs: latency() });
    };
    const req = (https ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent: https ? agents.https : agents.http,
        lookup: guardedLookup(options.policy),
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': USER_AGENT,
          ...headers,
        },
      },
      (res: IncomingMessage) => {
        const statusCode = res.statusCode ?? 0;
        const chunks: Buffer[] = [];
        let size = 0;
        const done = () => {
          const responseBody = Buffer.concat(chunks).subarray(0, RESPONSE_LOG_BYTES);
          finish({ statusCode, responseBody: responseBody.toString('utf8') });
        };
        res.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_LOG_BYTES) chunks.push(chunk);
          size += chunk.length;
          // Enough for the log: the rest of a large answer is not read at all.
          if (size >= RESPONSE_LOG_BYTES) {
            done();
            res.destroy();
          }
        });
        res.on('end', done);
        res.on('error', done);
      },
    );
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${options.timeoutMs} ms` });
      req.destroy();
    }, options.timeoutMs);
    req.on('error', (err) => finish({ error: describe(err) }));
    req.end(body);
  });
}
