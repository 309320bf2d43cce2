// The CPU work of a create, done at start on made-up runs that are thrown away: the template
// check, the new run, its SQL and its JSON answer. A process that has done it a few hundred
// times has had V8 compile these paths before its first request, instead of compiling them
// while 32 requests wait (the coldstart bench phase). Nothing is stored or sent.
import { DEMO_TEMPLATE } from '../admin/demo-template.js';
import { newId } from '../lib/ids.js';
import type { Template } from '../templates/template.js';
import { checkAgainstTemplate } from './run-service.js';
import {
  eventRowsOf,
  insertEventsStatements,
  insertRunsStatements,
  templateGuardSql,
} from './run-sql.js';
import { newRun } from './run-state.js';
import { resourceJson } from './run-views.js';

/** A create's body as the rehearsal's requests send it (warm-up.ts). */
export function rehearsalBody(): string {
  return JSON.stringify({
    workflow_template_id: newId(),
    input_fields: INPUTS,
    user_assignments: ASSIGNMENTS,
  });
}

const INPUTS = { full_name: 'Ada Lovelace', email: 'ada@example.com', approved_by: 'charles' };
const ASSIGNMENTS = { 'Personal details': 'ada', 'Manager approval': 'charles' };

/** Makes `times` runs of the demo template as a create would, in batches as the batcher does. */
export function rehearseCreates(times: number): void {
  const template: Template = { ...DEMO_TEMPLATE, id: newId(), organizationId: newId(), version: 1 };
  const actor = { type: 'api_key', id: newId(), name: 'rehearsal' } as const;
  const batch = [];
  for (let i = 0; i < times; i++) {
    checkAgainstTemplate(template, INPUTS, ASSIGNMENTS);
    const run = newRun(
      newId(),
      template.organizationId,
      template,
      INPUTS,
      ASSIGNMENTS,
      new Date(),
      actor,
    );
    resourceJson(run);
    batch.push(run);
    if (batch.length === 20 || i === times - 1) {
      templateGuardSql([{ templateId: template.id, latestVersion: 1 }]);
      insertRunsStatements(batch);
      insertEventsStatements(eventRowsOf(batch));
      batch.length = 0;
    }
  }
}
