import { describe, expect, it } from 'vitest';
import { applyReverseDelta, createReverseDelta } from './history-delta.js';

describe('reverse deltas rebuild the older version exactly', () => {
  const cases: Array<[string, string, string]> = [
    ['an edit in the middle', 'line 1\nline 2\nline 3\n', 'line 1\nline two\nline 3\n'],
    ['an insert', 'a\nb\n', 'a\ninserted\nb\n'],
    ['identical content', 'same', 'same'],
    ['from empty', '', 'new text'],
    ['to empty', 'old text', ''],
    ['repeated text (prefix and suffix overlap)', 'aaaa', 'aaaaaa'],
    ['a changed emoji (surrogate pairs kept whole)', 'x\u{1F600}y', 'x\u{1F601}y'],
    ['an emoji added next to another', '\u{1F600}', '\u{1F600}\u{1F600}'],
  ];
  it.each(cases)('%s', (_name, older, newer) => {
    const delta = createReverseDelta(older, newer);
    expect(applyReverseDelta(newer, delta)).toBe(older);
    // The middle is well-formed text: it survives a UTF-8 round trip (how Redis stores it).
    expect(Buffer.from(delta, 'utf8').toString('utf8')).toBe(delta);
  });

  it('a one-line edit of a 100 KB file is a delta of a few bytes, not a copy', () => {
    const older = Array.from(
      { length: 2000 },
      (_, line) => `line ${line}: remembered progress`,
    ).join('\n');
    const newer = older.replace('line 1000:', 'line one thousand:');
    const delta = createReverseDelta(older, newer);
    expect(delta.length).toBeLessThan(40);
    expect(applyReverseDelta(newer, delta)).toBe(older);
  });

  it('finds the same prefix and suffix as a character-by-character scan, across chunk sizes', () => {
    // Deterministic pseudo-random edits of texts from 0 to ~9,000 characters, so the first
    // difference falls on, before and after every chunk boundary (4096, 256, 16).
    let seed = 42;
    const random = (below: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % below;
    };
    const alphabet = ['a', 'b', '\n', 'é', '\u{1F600}'];
    const text = (length: number): string =>
      Array.from({ length }, () => alphabet[random(alphabet.length)]).join('');
    for (let round = 0; round < 400; round += 1) {
      const older = text(random(round < 200 ? 300 : 9_000));
      const at = random(older.length + 1);
      const cut = random(Math.min(20, older.length - at) + 1);
      const newer = older.slice(0, at) + text(random(5)) + older.slice(at + cut);
      expect(createReverseDelta(older, newer)).toBe(naiveReverseDelta(older, newer));
      expect(applyReverseDelta(newer, createReverseDelta(older, newer))).toBe(older);
    }
  });

  it('refuses a delta that does not fit', () => {
    expect(() => applyReverseDelta('short', '10,10\nx')).toThrow(/does not fit/u);
    expect(() => applyReverseDelta('short', 'garbage')).toThrow(/malformed/u);
  });
});

/** The delta by definition: compare one character at a time. */
function naiveReverseDelta(older: string, newer: string): string {
  const limit = Math.min(older.length, newer.length);
  let prefix = 0;
  while (prefix < limit && older[prefix] === newer[prefix]) prefix += 1;
  if (prefix > 0 && /[\uD800-\uDBFF]/u.test(older[prefix - 1] ?? '')) prefix -= 1;
  let suffix = 0;
  while (
    suffix < limit - prefix &&
    older[older.length - 1 - suffix] === newer[newer.length - 1 - suffix]
  ) {
    suffix += 1;
  }
  if (suffix > 0 && /[\uDC00-\uDFFF]/u.test(older[older.length - suffix] ?? '')) suffix -= 1;
  return `${prefix},${suffix}\n${older.slice(prefix, older.length - suffix)}`;
}
