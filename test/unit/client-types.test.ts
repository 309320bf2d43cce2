// The client's types hold a caller to the API document: a wrong body, an unknown field, a
// missing required one or an operation the API lacks does not compile. Each `@ts-expect-error`
// below fails the build (TS2578, an unused directive) the day that line would compile; the
// build compiles this file, and the test then only runs what compiles.
import { expect } from 'chai';
import {
  WorkflowRunClient,
  WorkflowRunError,
  type ErrorCode,
  type ListItem,
  type WorkflowRunSummary,
} from 'workflow-run-client';

/** Never called: its body only has to compile (or fail to, where marked). */
async function typeChecks(wrs: WorkflowRunClient): Promise<void> {
  await wrs.createWorkflowRun({ workflow_template_id: 't', input_fields: { a: 'b' } });
  // @ts-expect-error: input_fields is required
  await wrs.createWorkflowRun({ workflow_template_id: 't' });
  // @ts-expect-error: a field the operation does not have
  await wrs.createWorkflowRun({ workflow_template_id: 't', input_fields: {}, colour: 'red' });
  // @ts-expect-error: input values are strings
  await wrs.createWorkflowRun({ workflow_template_id: 't', input_fields: { a: 1 } });
  // @ts-expect-error: the body of another operation
  await wrs.cancelWorkflowRun({ workflow_template_id: 't', input_fields: {} });
  // @ts-expect-error: an operation the API does not have
  await wrs.launchWorkflowRun({ workflow_template_id: 't' });
  // @ts-expect-error: overdue is a boolean
  await wrs.getWorkflowRuns({ overdue: 'yes' });
  // @ts-expect-error: only lists can be paged
  wrs.list('getWorkflowRun', { id: 'r' });

  const run = await wrs.getWorkflowRun({ id: 'r' });
  const status: 'pending' | 'active' | 'completed' | 'failed' | 'cancelled' = run.status;
  // @ts-expect-error: optional in the document, so possibly absent
  const assignee: string = run.currentStepAssignee;
  for await (const summary of wrs.list('getWorkflowRuns', { status: 'active' })) {
    const item: WorkflowRunSummary = summary;
    // @ts-expect-error: a list item has only the document's fields
    void item.inputFields;
  }
  for await (const event of wrs.streamRunEvents({ run_id: 'r' })) {
    if (event.type === 'run.created') {
      const id: string = event.data.runId;
      void id;
    }
    // @ts-expect-error: not an event type of the document
    if (event.type === 'run.exploded') void event;
  }
  const error = new WorkflowRunError(400, 'invalid_body', 'm', '/x', undefined, undefined);
  const code: ErrorCode = error.code;
  // @ts-expect-error: not a code of the document
  const made: ErrorCode = 'made_up_code';
  const item: ListItem<'getWorkflowTemplates'> = (await wrs.getWorkflowTemplates())[0]!;
  void [status, assignee, code, made, item];
}

describe('client types', () => {
  it('compile only for what the API document allows (the build checks the marked lines)', () => {
    expect(typeChecks).to.be.a('function');
    const error = new WorkflowRunError(
      409,
      'run_not_cancellable',
      'done',
      undefined,
      'k',
      undefined,
    );
    expect([error.status, error.code, error.idempotencyKey, error.name]).to.deep.equal([
      409,
      'run_not_cancellable',
      'k',
      'WorkflowRunError',
    ]);
  });
});
