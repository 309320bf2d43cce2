// The route contract as declared: a handler's query and body types come from the route's own
// schemas (the @ts-expect-error lines are checked when the tests compile), and every named
// schema a route uses, for requests and answers, is found by walking the routes.
import { expect } from 'chai';
import { loadConfig } from '../../src/config.js';
import { ErrorSchema } from '../../src/http/common-schemas.js';
import { arrayOf, defineRoute, namedSchemas } from '../../src/http/contract.js';
import {
  runSchemas,
  WorkflowRunSchema,
  WorkflowRunSummarySchema,
} from '../../src/runs/run-schemas.js';

const { getQuery, cancelBody } = runSchemas(loadConfig({}));

const getRuns = defineRoute({
  operationId: 'getRuns',
  method: 'GET',
  path: '/get-runs',
  summary: 'runs',
  scope: 'runs:read',
  query: getQuery,
  responses: { 200: { description: 'the runs', schema: arrayOf(WorkflowRunSummarySchema) } },
  async handle({ query, body }) {
    const id: string = query.id;
    const none: undefined = body; // no body schema, no body
    // @ts-expect-error the query schema has no field reason
    const reason: string = query.reason;
    return { status: 200, body: [{ id, none, reason }] };
  },
});

const cancelRun = defineRoute({
  operationId: 'cancelRun',
  method: 'POST',
  path: '/cancel-run',
  summary: 'cancel a run',
  scope: 'runs:write',
  body: cancelBody,
  responses: {
    200: { description: 'the run', schema: WorkflowRunSchema },
  },
  refusals: ['run_not_found'],
  async handle({ query, body }) {
    const reason: string | undefined = body.reason;
    // @ts-expect-error a route without a query schema takes no parameters
    const id: string = query.id;
    // @ts-expect-error workflow_run_id is required, so never undefined
    const runId: undefined = body.workflow_run_id;
    return { status: 200, body: { id, reason, runId } };
  },
});

// A route cannot be declared without the scope its key must hold, nor with one that is not a
// scope: least privilege by construction.
// @ts-expect-error scope is missing
defineRoute({
  operationId: 'noScope',
  method: 'GET',
  path: '/no-scope',
  summary: 'a route that forgot its scope',
  responses: { 200: { description: 'nothing' } },
  async handle() {
    return { status: 200, body: null };
  },
});
defineRoute({
  operationId: 'badScope',
  method: 'GET',
  path: '/bad-scope',
  summary: 'a route with a scope that does not exist',
  // @ts-expect-error not a scope
  scope: 'runs:everything',
  responses: { 200: { description: 'nothing' } },
  async handle() {
    return { status: 200, body: null };
  },
});

describe('route contract', () => {
  it('finds every named schema the routes use, once each, Error and array items among them', () => {
    const found = namedSchemas([getRuns, cancelRun, getRuns]);
    expect(found).to.have.lengthOf(5);
    expect(found).to.have.members([
      getQuery,
      WorkflowRunSummarySchema,
      ErrorSchema,
      cancelBody,
      WorkflowRunSchema,
    ]);
  });
});
