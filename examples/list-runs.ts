// Pages through a filtered list of runs: every active run of one label, whatever the number of
// pages (the client follows each page's Link rel="next"), then one page at a time by cursor.
//   WRS_API_KEY=… node dist/examples/list-runs.js [label, e.g. team:ops]
import { clientFromEnv } from './env.js';

const wrs = clientFromEnv();
const label = process.argv[2];
const filter = { status: 'pending,active', ...(label ? { label: [label] } : {}) };

let count = 0;
for await (const run of wrs.list('getWorkflowRuns', { ...filter, limit: 50 })) {
  count++;
  if (count <= 5) console.log(`${run.id}  ${run.status.padEnd(9)}  ${run.currentStepName ?? ''}`);
}
console.log(`${count} open runs${label ? ` labelled ${label}` : ''}`);

// The same list a page at a time, as a screen with a "next" button reads it.
let cursor: string | undefined;
for (let n = 1; n <= 3; n++) {
  const page = await wrs.page('getWorkflowRuns', { ...filter, limit: 2, cursor });
  console.log(`page ${n}: ${page.items.map((r) => r.id).join(', ') || '(empty)'}`);
  if (!page.nextCursor) break;
  cursor = page.nextCursor;
}
