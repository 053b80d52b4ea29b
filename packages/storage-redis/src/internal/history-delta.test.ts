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

  it('refuses a delta that does not fit', () => {
    expect(() => applyReverseDelta('short', '10,10\nx')).toThrow(/does not fit/u);
    expect(() => applyReverseDelta('short', 'garbage')).toThrow(/malformed/u);
  });
});
