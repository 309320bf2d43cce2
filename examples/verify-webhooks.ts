// Receives the service's webhooks and verifies each one (signature and timestamp) before
// trusting it. Starts a receiver, registers it as an endpoint, creates a run, and waits for that
// run's run.created delivery; then removes the endpoint.
//   WRS_API_KEY=… node dist/examples/verify-webhooks.js
// The service must be allowed to call this address (WEBHOOK_ALLOW_HTTP / WEBHOOK_ALLOW_PRIVATE
// for a receiver on http://127.0.0.1).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhook, WebhookVerificationError, type WebhookPayload } from 'workflow-run-client';
import { clientFromEnv } from './env.js';

const wrs = clientFromEnv();
let secret = '';
const received: WebhookPayload[] = [];

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    try {
      // The raw body, as received: re-serialised JSON would not match its signature.
      received.push(verifyWebhook(Buffer.concat(chunks), req.headers, secret));
      res.writeHead(204).end();
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
      res.writeHead(400).end(); // not from the service, or replayed: refuse it
    }
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const { port } = server.address() as AddressInfo;

const endpoint = await wrs.createWebhookEndpoint({
  url: `http://127.0.0.1:${port}/hooks`,
  events: ['run.created'],
  description: 'verify-webhooks example',
});
secret = endpoint.secret; // shown once, at creation: keep it where the receiver can read it
try {
  const template = await wrs.createWorkflowTemplate({
    name: 'Webhook example',
    pages: [{ name: 'Only step', inputFields: [{ inputId: 'note', fieldName: 'Note' }] }],
  });
  const run = await wrs.createWorkflowRun({ workflow_template_id: template.id, input_fields: {} });
  const deadline = Date.now() + 30_000;
  let mine: WebhookPayload | undefined;
  while (!(mine = received.find((p) => p.data.runId === run.id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  if (!mine) throw new Error('no delivery for the run within 30 s');
  console.log(`verified ${mine.type} for run ${mine.data.runId}`);
} finally {
  await wrs.deleteWebhookEndpoint({ id: endpoint.id });
  server.close();
}
