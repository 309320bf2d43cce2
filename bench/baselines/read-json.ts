// The one thing both HTTP baselines do with a request: read its body and parse it as JSON.
import type { IncomingMessage } from 'node:http';

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as unknown;
}
