/**
 * Line diff between two versions of a memory file, for the memory browser.
 *
 * Myers' O(ND) algorithm: memory files are small and versions differ by a few lines (one
 * `str_replace` or `insert`), so D is small and this is fast. Beyond `maxEdits` differing lines we
 * stop and report the whole file as replaced rather than burn the server's CPU.
 */

export type DiffOperation = 'equal' | 'insert' | 'delete';

export interface DiffLine {
  /** What happened to the line going from `before` to `after`. */
  op: DiffOperation;
  /** The line's text without its newline. */
  text: string;
  /** 1-based line number in `before` (equal and delete lines). */
  oldLine?: number;
  /** 1-based line number in `after` (equal and insert lines). */
  newLine?: number;
}

export interface LineDiff {
  lines: DiffLine[];
  added: number;
  removed: number;
  /** True when the files differed too much and the diff is a whole-file replacement. */
  truncated: boolean;
}

function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function wholeReplacement(before: string[], after: string[]): LineDiff {
  const lines: DiffLine[] = [
    ...before.map((text, index): DiffLine => ({ op: 'delete', text, oldLine: index + 1 })),
    ...after.map((text, index): DiffLine => ({ op: 'insert', text, newLine: index + 1 })),
  ];
  return { lines, added: after.length, removed: before.length, truncated: true };
}

/** Diff two texts line by line. */
export function diffLines(beforeText: string, afterText: string, maxEdits = 2_000): LineDiff {
  const a = splitLines(beforeText);
  const b = splitLines(afterText);
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const frontier = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let distance = 0; distance <= Math.min(max, maxEdits); distance++) {
    trace.push(frontier.slice());
    for (let k = -distance; k <= distance; k += 2) {
      const down =
        k === -distance ||
        (k !== distance && (frontier[offset + k - 1] ?? 0) < (frontier[offset + k + 1] ?? 0));
      let x = down ? (frontier[offset + k + 1] ?? 0) : (frontier[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      frontier[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
    if (found) break;
  }
  if (!found) return wholeReplacement(a, b);

  // Walk the trace backwards to recover the edit script.
  const reversed: DiffLine[] = [];
  let x = n;
  let y = m;
  for (let distance = trace.length - 1; distance >= 0; distance--) {
    const previous = trace[distance] as Int32Array;
    const k = x - y;
    const down =
      k === -distance ||
      (k !== distance && (previous[offset + k - 1] ?? 0) < (previous[offset + k + 1] ?? 0));
    const previousK = down ? k + 1 : k - 1;
    const previousX = distance === 0 ? 0 : (previous[offset + previousK] ?? 0);
    const previousY = distance === 0 ? 0 : previousX - previousK;
    while (x > previousX && y > previousY) {
      reversed.push({ op: 'equal', text: a[x - 1] ?? '', oldLine: x, newLine: y });
      x--;
      y--;
    }
    if (distance > 0) {
      if (down) {
        reversed.push({ op: 'insert', text: b[y - 1] ?? '', newLine: y });
        y--;
      } else {
        reversed.push({ op: 'delete', text: a[x - 1] ?? '', oldLine: x });
        x--;
      }
    }
  }
  const lines = reversed.reverse();
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.op === 'insert') added++;
    else if (line.op === 'delete') removed++;
  }
  return { lines, added, removed, truncated: false };
}
