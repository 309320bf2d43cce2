// Serves GET /metrics on its own port (METRICS_PORT), apart from the API's: API clients can
// never read it. Unset, no server starts.
import { createServer, type Server } from 'node:http';
import type { Logger } from '../logger.js';
import { registry } from './metrics.js';

/** Where the text comes from: this process's registry, or the API processes' summed. */
export interface MetricsSource {
  contentType: string;
  metrics(): Promise<string>;
}

export function startMetricsServer(
  port: number | undefined,
  log: Logger,
  source: MetricsSource = registry,
): Server | undefined {
  if (port === undefined) return undefined;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
      return;
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      (err: unknown) => {
        log.warn('metrics collection failed', { err });
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"failed"}');
      },
    );
  });
  server.listen(port, () => {
    const address = server.address();
    log.info('metrics listening', {
      port: typeof address === 'object' && address ? address.port : port,
    });
  });
  return server;
}
