/**
 * A byte bound on every list answer. Row counts alone do not bound an answer (a row's size
 * depends on what a project, an event or a session summary holds), so a page also stops at
 * `MAX_PAGE_BYTES` of rows and says where to continue with the route's own cursor (`nextCursor`,
 * `before`, `lastEventId`): a client pages on as it would after a short page.
 */

/** Most bytes of rows (as JSON) one list answer carries. */
export const MAX_PAGE_BYTES = 512 * 1024;

/**
 * The longest run of `rows` whose JSON fits in `maxBytes`, taken from the start (oldest or first
 * shown) or from the end (newest), and how many rows were left out. At least one row is kept, so
 * paging always moves on.
 */
export function fitRows<T>(
  rows: readonly T[],
  from: 'start' | 'end',
  maxBytes: number = MAX_PAGE_BYTES,
): { rows: T[]; left: number } {
  let bytes = 0;
  let kept = 0;
  for (; kept < rows.length; kept++) {
    const row = rows[from === 'start' ? kept : rows.length - 1 - kept];
    bytes += Buffer.byteLength(JSON.stringify(row) ?? '') + 1;
    if (bytes > maxBytes && kept > 0) break;
  }
  const left = rows.length - kept;
  return {
    rows: from === 'start' ? rows.slice(0, kept) : rows.slice(left),
    left,
  };
}
