// Reading a Prometheus text page (GET /metrics) in tests.

/** Every sample of a Prometheus text page, keyed `name{labels}` as written. */
export function prometheusSamples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    out.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return out;
}
