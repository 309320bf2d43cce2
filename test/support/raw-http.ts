// A bare HTTP client for hostile requests: any method, headers and body bytes, sent with
// node:http so nothing is normalised on the way (fetch would refuse or rewrite some of them).
import { request as httpRequest } from 'node:http';

export interface RawRequest {
  method: string;
  /** Path and query, appended to the base URL as is. */
  path: string;
  headers: Record<string, string>;
  body?: string;
  /** Send the body chunked instead of with a Content-Length. */
  chunked?: boolean;
}

export interface RawReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

export function sendRaw(baseUrl: string, req: RawRequest): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...req.headers };
    if (req.body !== undefined && !req.chunked)
      headers['content-length'] = Buffer.byteLength(req.body);
    const outgoing = httpRequest(
      baseUrl + req.path,
      { method: req.method, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    // A server that answers before reading the whole body (413) may close while we still
    // write; the answer, when it came, is what counts.
    outgoing.on('error', reject);
    if (req.body !== undefined) outgoing.write(req.body);
    outgoing.end();
  });
}
