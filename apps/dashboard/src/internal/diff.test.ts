import { describe, expect, it } from 'vitest';
import { diffLines } from './diff.js';

function rebuild(lines: ReturnType<typeof diffLines>['lines'], side: 'before' | 'after'): string {
  const skip = side === 'before' ? 'insert' : 'delete';
  return lines
    .filter((line) => line.op !== skip)
    .map((line) => `${line.text}\n`)
    .join('');
}

describe('diffLines', () => {
  it('marks only the changed lines of a str_replace', () => {
    const before = 'a\nb\n"passes": false\nd\n';
    const after = 'a\nb\n"passes": true\nd\n';
    const diff = diffLines(before, after);
    expect(diff.added).toBe(1);
    expect(diff.removed).toBe(1);
    expect(diff.lines.filter((line) => line.op !== 'equal').map((line) => line.text)).toEqual([
      '"passes": false',
      '"passes": true',
    ]);
    expect(diff.lines.find((line) => line.op === 'delete')?.oldLine).toBe(3);
    expect(diff.lines.find((line) => line.op === 'insert')?.newLine).toBe(3);
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
      expect(rebuild(diff.lines, 'before')).toBe(beforeText);
      expect(rebuild(diff.lines, 'after')).toBe(afterText);
    }
  });

  it('gives up with a whole-file replacement beyond the edit budget', () => {
    const before = Array.from({ length: 50 }, (_, index) => `a${index}`).join('\n');
    const after = Array.from({ length: 50 }, (_, index) => `b${index}`).join('\n');
    const diff = diffLines(before, after, 10);
    expect(diff.truncated).toBe(true);
    expect(diff.added).toBe(50);
    expect(diff.removed).toBe(50);
  });

  it('treats a created file as all inserts', () => {
    const diff = diffLines('', 'x\ny\n');
    expect(diff.lines.map((line) => line.op)).toEqual(['insert', 'insert']);
  });
});
