// The bench clients' one HTTP call: a request on a keep-alive agent, the body read whole.
import { Agent, request } from 'node:http';

export interface Reply {
  status: number;
  body: string;
}

export function httpRequest(
  agent: Agent,
  url: URL | string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
