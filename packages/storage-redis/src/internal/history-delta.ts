/**
 * Reverse deltas for the file history: what turns a file's new content back into the content it
 * replaced. An edit changes a small span of a file, so the history keeps the common prefix and
 * suffix lengths and the replaced middle instead of a second copy of the whole file.
 *
 * Format: `<prefix>,<suffix>\n<middle>`, lengths in UTF-16 code units of the newer content:
 * `older = newer.slice(0, prefix) + middle + newer.slice(newer.length - suffix)`. The cut points
 * never split a surrogate pair, so `middle` is always well-formed text (Redis stores UTF-8).
 */

/**
 * Characters compared per step while looking for the first difference, largest first: slices
 * compare with memcmp, while a character-by-character loop costs ~10 ns a character (more on a
 * string that is not flat yet), so the scan narrows down in steps and compares single
 * characters only for the last few.
 */
const CHUNKS = [4096, 256, 16, 1];

/** The reverse delta that rebuilds `older` from `newer`. */
export function createReverseDelta(older: string, newer: string): string {
  const limit = Math.min(older.length, newer.length);
  let prefix = commonPrefixLength(older, newer, limit);
  if (prefix > 0 && isHighSurrogate(older.charCodeAt(prefix - 1))) {
    prefix -= 1;
  }
  let suffix = commonSuffixLength(older, newer, limit - prefix);
  if (suffix > 0 && isLowSurrogate(older.charCodeAt(older.length - suffix))) {
    suffix -= 1;
  }
  return `${prefix},${suffix}\n${older.slice(prefix, older.length - suffix)}`;
}

/** Applies a delta made by `createReverseDelta` to the newer content. */
export function applyReverseDelta(newer: string, delta: string): string {
  const newline = delta.indexOf('\n');
  const comma = delta.indexOf(',');
  if (newline === -1 || comma === -1 || comma > newline) {
    throw new Error('A history delta is malformed.');
  }
  const prefix = Number(delta.slice(0, comma));
  const suffix = Number(delta.slice(comma + 1, newline));
  if (!Number.isInteger(prefix) || !Number.isInteger(suffix) || prefix + suffix > newer.length) {
    throw new Error('A history delta does not fit the newer version.');
  }
  return newer.slice(0, prefix) + delta.slice(newline + 1) + newer.slice(newer.length - suffix);
}

function commonPrefixLength(left: string, right: string, limit: number): number {
  let index = 0;
  for (const chunk of CHUNKS) {
    while (
      index + chunk <= limit &&
      left.slice(index, index + chunk) === right.slice(index, index + chunk)
    ) {
      index += chunk;
    }
  }
  return index;
}

function commonSuffixLength(left: string, right: string, limit: number): number {
  let count = 0;
  for (const chunk of CHUNKS) {
    while (
      count + chunk <= limit &&
      left.slice(left.length - count - chunk, left.length - count) ===
        right.slice(right.length - count - chunk, right.length - count)
    ) {
      count += chunk;
    }
  }
  return count;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
