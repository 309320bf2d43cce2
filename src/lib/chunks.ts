/**
 * Splits items into runs whose summed size stays under maxBytes (an item larger than that gets
 * a chunk of its own), so one multi-row statement never exceeds the server's packet limit
 * (max_allowed_packet: 16 MiB on MariaDB, 64 MiB on MySQL 8 by default).
 */
export function chunkBySize<T>(items: T[], sizeOf: (item: T) => number, maxBytes: number): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    const itemSize = sizeOf(item);
    if (current.length > 0 && size + itemSize > maxBytes) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += itemSize;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
