import { describe, expect, it } from 'vitest';
import {
  contentForOutput,
  errorLine,
  outputJson,
  terminalSafe,
  terminalText,
} from './terminal-text.js';

describe('terminalText', () => {
  it('shows every character a terminal acts on, keeping tabs, newlines and printable text', () => {
    const hostile = [
      '\u001b[2J\u001b[H', // clear screen, cursor home
      '\u001b]52;c;aGk=\u0007', // OSC 52: write the clipboard
      '\u001b]8;;https://evil.example\u001b\\link\u001b]8;;\u001b\\', // hidden hyperlink
      '\u009b31m', // C1 CSI
      'a\rb', // carriage return rewrites the line
      'x\u0008y', // backspace
      '\u202eevil\u202c', // right-to-left override
      '\u2066iso\u2069',
      '\u007f',
    ];
    for (const text of hostile) {
      const shown = terminalText(text);
      expect(shown, JSON.stringify(text)).not.toMatch(
        // eslint-disable-next-line no-control-regex -- the characters a terminal acts on
        /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/u,
      );
    }
    expect(terminalText('\u001b[31mred')).toBe('\\u{1b}[31mred');
    expect(terminalText('tab\there\nnext line · ünïcødé ✓')).toBe(
      'tab\there\nnext line · ünïcødé ✓',
    );
    expect(terminalText('one\ntwo', { oneLine: true })).toBe('one\\u{a}two');
  });

  it('terminalSafe reaches strings at any depth and leaves other values alone', () => {
    expect(
      terminalSafe({ a: 'x\u001by', list: ['\n', 3, null, { deep: '\u009b' }], flag: true }),
    ).toEqual({ a: 'x\\u{1b}y', list: ['\\u{a}', 3, null, { deep: '\\u{9b}' }], flag: true });
  });

  it('content goes raw into a pipe and shown into a terminal', () => {
    const text = 'keep\u001b[0m';
    expect(contentForOutput(text, { isTTY: false } as NodeJS.WriteStream)).toBe(text);
    expect(contentForOutput(text, { isTTY: true } as NodeJS.WriteStream)).toBe('keep\\u{1b}[0m');
  });
});

describe('outputJson', () => {
  it('escapes what JSON leaves raw and parses back to the same value', () => {
    const value = { text: 'a\u009bb\u202ec\u007f\u001b', list: ['é', 1] };
    const json = outputJson(value, 2);
    // eslint-disable-next-line no-control-regex -- the characters a terminal acts on
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e](?<!\n)/u);
    expect(json).toContain('\\u009b');
    expect(JSON.parse(json)).toEqual(value);
    expect(outputJson({ a: 1 })).toBe(JSON.stringify({ a: 1 }));
  });
});

describe('errorLine', () => {
  it('joins the lines of a message with a semicolon and shows what a terminal acts on', () => {
    expect(errorLine('push refused:\n  remote: hook declined\r\n  \n')).toBe(
      'push refused:; remote: hook declined',
    );
    expect(errorLine('50%\r100%\rdone \u001b[2J')).toBe('50%; 100%; done \\u{1b}[2J');
    expect(errorLine('one line')).toBe('one line');
  });
});
