// Serves GET /metrics on its own port (METRICS_PORT), apart from the API's: API clients can
// never read it. Unset, no server starts.
import { createServer, type Server } from 'node:http';
import type { Logger } from '../logger.js';
import { registry } from './metrics.js';

export function startMetricsServer(port: number | undefined, log: Logger): Server | undefined {
  if (port === undefined) return undefined;
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not found"}');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
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
