import { describe, expect, it } from 'vitest';
import { diffLines, type DiffLine } from './diff.js';

function rebuild(lines: DiffLine[], side: 'before' | 'after'): string {
  const skip = side === 'before' ? 'insert' : 'delete';
  return lines
    .filter((line) => line.op !== skip)
    .map((line) => `${line.text}\n`)
    .join('');
}

function numbered(prefix: string, count: number): string {
  return Array.from({ length: count }, (_, index) => `${prefix}${index}\n`).join('');
}

describe('diffLines', () => {
  it('marks only the changed lines of a str_replace', () => {
    const before = 'a\nb\n"passes": false\nd\n';
    const after = 'a\nb\n"passes": true\nd\n';
    const diff = diffLines(before, after);
    if (diff.tooLarge) throw new Error('expected a diff');
    expect(diff.added).toBe(1);
    expect(diff.removed).toBe(1);
    expect(diff.lines.filter((line) => line.op !== 'equal').map((line) => line.text)).toEqual([
      '"passes": false',
      '"passes": true',
    ]);
    expect(diff.lines.find((line) => line.op === 'delete')?.oldLine).toBe(3);
    expect(diff.lines.find((line) => line.op === 'insert')?.newLine).toBe(3);
    expect(diff.lines.at(-1)).toEqual({ op: 'equal', text: 'd', oldLine: 4, newLine: 4 });
  });

  it('reconstructs both sides exactly for random edits', () => {
    let seed = 7;
    const random = (limit: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % limit;
    };
    for (let round = 0; round < 200; round++) {
      const before = Array.from({ length: random(12) }, () => `l${random(4)}`);
      const after = Array.from({ length: random(12) }, () => `l${random(4)}`);
      const beforeText = before.map((line) => `${line}\n`).join('');
      const afterText = after.map((line) => `${line}\n`).join('');
      const diff = diffLines(beforeText, afterText);
      if (diff.tooLarge) throw new Error('expected a diff');
      expect(rebuild(diff.lines, 'before')).toBe(beforeText);
      expect(rebuild(diff.lines, 'after')).toBe(afterText);
    }
  });

  it('says "too large to show" beyond the edit budget, with no lines', () => {
    const diff = diffLines(numbered('a', 50), numbered('b', 50), { maxEdits: 10 });
    expect(diff).toEqual({
      tooLarge: true,
      reason: 'edits',
      message: 'Too large to show: the versions differ in more than 10 lines.',
      lines: [],
    });
  });

  it('refuses before splitting when a version has too many lines', () => {
    const diff = diffLines(numbered('a', 101), numbered('a', 5), { maxLines: 100 });
    expect(diff).toMatchObject({ tooLarge: true, reason: 'lines' });
    expect(diffLines(numbered('a', 100), numbered('a', 99), { maxLines: 100 }).tooLarge).toBe(
      false,
    );
  });

  it('stops at the time budget', () => {
    const diff = diffLines(numbered('a', 20_000), numbered('b', 20_000), {
      maxEdits: 40_000,
      timeoutMs: 5,
    });
    expect(diff).toMatchObject({ tooLarge: true, reason: 'time' });
  });

  it('treats a created file as all inserts', () => {
    const diff = diffLines('', 'x\ny\n');
    expect(diff.lines.map((line) => line.op)).toEqual(['insert', 'insert']);
  });
});
