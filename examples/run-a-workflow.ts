// Creates the onboarding template and a run of it, follows the run on the live stream, and
// completes each step as it becomes current, until the run completes.
//   WRS_API_KEY=… node dist/examples/run-a-workflow.js
import { readFile } from 'node:fs/promises';
import type { CreateWorkflowTemplateRequest } from 'workflow-run-client';
import { clientFromEnv } from './env.js';

const wrs = clientFromEnv();
const definition = JSON.parse(
  await readFile(new URL('../../examples/onboarding-template.json', import.meta.url), 'utf8'),
) as CreateWorkflowTemplateRequest;
const template = await wrs.createWorkflowTemplate(definition);

// Values for the later steps, given when each step is completed.
const values: Record<string, Record<string, string>> = {
  Equipment: { laptop: 'ThinkPad X1' },
  'Manager approval': { approved_by: 'grace' },
};

const stop = new AbortController();
let created: Promise<{ id: string }> | undefined;
// The run is created once the stream is placed, so none of its events can be missed.
const events = wrs.streamRunEvents(
  {},
  {
    signal: stop.signal,
    onConnectionChange: (connected) => {
      if (connected && !created) created = create(); // not again on a reconnect: it resumes
    },
  },
);

async function create() {
  const run = await wrs.createWorkflowRun({
    workflow_template_id: template.id,
    input_fields: { full_name: 'Ada Lovelace', email: 'ada@example.com' },
    user_assignments: { 'Personal details': 'ada', 'Manager approval': 'grace' },
  });
  console.log(`created run ${run.id} (${run.status})`);
  return run;
}

for await (const event of events) {
  // An event may arrive before the create's answer does: wait for the answer to compare.
  if (event.data.runId !== (await created)?.id) continue;
  console.log(`event ${event.id}: ${event.type}`);
  if (event.type === 'run.started' || event.type === 'step.completed') {
    const run = await wrs.getWorkflowRun({ id: event.data.runId });
    const step = run.currentStepName;
    if (run.status === 'active' && step) {
      await wrs.completeWorkflowStep({
        workflow_run_id: run.id,
        step_name: step,
        input_fields: values[step] ?? {},
      });
      console.log(`completed step "${step}"`);
    }
  }
  if (event.type === 'run.completed') {
    console.log(`run ${event.data.runId} completed`);
    stop.abort();
  }
}
