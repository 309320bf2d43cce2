// The insights endpoint, stating its contract (http/contract.ts); the handler only translates
// between HTTP and the insight service.
import { defineRoute, type Route } from '../http/contract.js';
import { RunInsightsSchema, type insightSchemas } from './insight-schemas.js';
import type { InsightService } from './insight-service.js';

export function insightRoutes(deps: {
  service: InsightService;
  schemas: ReturnType<typeof insightSchemas>;
}): Route[] {
  return [
    defineRoute({
      operationId: 'getRunInsights',
      method: 'GET',
      path: '/get-run-insights',
      summary:
        'How runs performed over a range: throughput per bucket, time to complete, time and lateness per step, open runs by step now',
      description:
        "Of one template (optionally one version) or every template of the organization; in buckets of hours, days or weeks of the organization's time zone. Read from rollups folded from the run history behind a cursor: asOf and lagMs say how far they trail it. Quantiles are within 1% of the exact ones.",
      scope: 'runs:read',
      query: deps.schemas.query,
      responses: { 200: { description: 'the figures', schema: RunInsightsSchema } },
      refusals: ['unknown_template', 'unknown_template_version'],
      async handle({ principal, query }) {
        return { status: 200, body: await deps.service.get(principal, query) };
      },
    }),
  ];
}
