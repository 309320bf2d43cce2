// The API document (OpenAPI 3.1) of the service as configured by its defaults, printed without
// starting MySQL or Redis: the typed client (clients/typescript) is generated from it. The routes
// are built with services that are never called; describing an endpoint touches only its contract.
import { apiDocument, apiRoutes, type AppDeps } from './app.js';
import { loadConfig } from './config.js';

/**
 * A service that describing the API may hold (and reach into, as routes destructure their deps)
 * but never call: a call is a bug, said loudly.
 */
const unused: object = new Proxy(function unusedService() {}, {
  get: () => unused,
  apply() {
    throw new Error('describing the API called a service');
  },
});

export function serviceDocument(env: NodeJS.ProcessEnv = {}): Record<string, unknown> {
  const config = loadConfig(env);
  // Each field of AppDeps but config is a service a handler would call; no handler runs here.
  const deps = new Proxy({}, { get: (_target, name) => (name === 'config' ? config : unused) });
  const routes = apiRoutes(deps as AppDeps);
  return apiDocument(routes, config);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${JSON.stringify(serviceDocument(), null, 2)}\n`);
}
