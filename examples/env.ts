// What every example needs: the service's address and an API key, from the environment.
import { WorkflowRunClient } from 'workflow-run-client';

export function clientFromEnv(): WorkflowRunClient {
  const apiKey = process.env.WRS_API_KEY;
  if (!apiKey) {
    console.error('set WRS_API_KEY (and WRS_BASE_URL if the service is not on localhost:3000)');
    process.exit(2);
  }
  return new WorkflowRunClient({
    baseUrl: process.env.WRS_BASE_URL ?? 'http://localhost:3000',
    apiKey,
  });
}
