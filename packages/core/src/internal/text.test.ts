import { describe, expect, it } from 'vitest';
import { formatSize, parseText, renderNumberedLines, serializeText } from './text.js';

describe('formatSize uses du -h style sizes', () => {
  it.each([
    [0, '0B'],
    [14, '14B'],
    [1023, '1023B'],
    [1024, '1.0K'],
    [1536, '1.5K'],
    [4096, '4.0K'],
    [1537, '1.6K'],
    [10 * 1024, '10K'],
    [12 * 1024 + 1, '13K'],
    [1_258_291, '1.2M'],
    [1024 * 1024 - 1, '1.0M'],
    [5 * 1024 * 1024 * 1024, '5.0G'],
  ])('%d bytes -> %s', (bytes, expected) => {
    expect(formatSize(bytes)).toBe(expected);
  });
});

describe('logical lines: a final newline ends the last line', () => {
  it.each([
    ['', [], false],
    ['a', ['a'], false],
    ['a\n', ['a'], true],
    ['a\nb', ['a', 'b'], false],
    ['a\n\n', ['a', ''], true],
    ['\n', [''], true],
  ])('%j', (content, lines, finalNewline) => {
    const document = parseText(content);
    expect(document.lines).toEqual(lines);
    expect(document.finalNewline).toBe(finalNewline);
    expect(serializeText(document)).toBe(content);
  });

  it('a file with only CRLF line endings is CRLF; mixed files are LF', () => {
    expect(parseText('a\r\nb\r\n')).toEqual({ lines: ['a', 'b'], eol: '\r\n', finalNewline: true });
    expect(parseText('a\r\nb\n').eol).toBe('\n');
    expect(parseText('\na\r\n').eol).toBe('\n');
    expect(parseText('a\rb\n').eol).toBe('\n');
    expect(parseText('a\rb')).toEqual({ lines: ['a\rb'], eol: '\n', finalNewline: false });
  });
});

describe('renderNumberedLines never exceeds maxChars', () => {
  it('cuts at a line boundary with a paging hint', () => {
    const lines = Array.from({ length: 500 }, (_, index) => `line ${index + 1} ${'x'.repeat(40)}`);
    const text = renderNumberedLines({
      header: 'H',
      lines,
      firstNumber: 1,
      totalLines: 500,
      maxChars: 2_000,
    });
    expect(text.length).toBeLessThanOrEqual(2_000);
    const last = text.split('\n').at(-1)!;
    expect(last).toMatch(/^\[Output cut at 2,000 characters: showing lines 1-\d+ of 500\./);
    expect(last).toMatch(/view_range \[\d+, \d+\]/);
  });

  it('shows every line when they fit, whether or not a hint would also fit after them', () => {
    const lines = Array.from({ length: 60 }, (_, index) => `line ${index + 1}`);
    const whole = ['H', ...lines.map((line, index) => `${String(index + 1).padStart(6)}\t${line}`)];
    const length = whole.join('\n').length;
    // Far below the limit, and so close to it that a paging hint would not fit after the lines.
    for (const maxChars of [length + 10_000, length + 600, length + 511, length + 100]) {
      const text = renderNumberedLines({
        header: 'H',
        lines,
        firstNumber: 1,
        totalLines: 60,
        maxChars,
      });
      if (maxChars - length > 200) expect(text).toBe(whole.join('\n'));
      else expect(text.split('\n').at(-1)).toMatch(/^\[Output cut at [\d,]+ characters: showing/);
    }
  });
});
