// Reading request headers as they were sent, for the headers a guess could make dangerous.
import type { IncomingMessage } from 'node:http';

/**
 * How many times a header was sent. Node keeps only the first of some repeated headers
 * (Authorization among them); this counts them all, from the raw header list, without
 * building Node's map of every header's values.
 */
export function headerCount(req: IncomingMessage, lowerCaseName: string): number {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === lowerCaseName.length && name.toLowerCase() === lowerCaseName) count++;
  }
  return count;
}
