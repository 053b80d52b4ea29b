import { describe, expect, it } from 'vitest';
import { isMemoryToolError } from './memory-tool-error.js';
import { displayPath, parseMemoryPath, toVirtualPath } from './path-policy.js';

/** Returns the refusal message, failing the test if the path was accepted. */
function refusal(path: string, options?: Parameters<typeof parseMemoryPath>[1]): string {
  try {
    const accepted = parseMemoryPath(path, options);
    throw new Error(`accepted ${JSON.stringify(path)} as ${JSON.stringify(accepted)}`);
  } catch (error) {
    if (!isMemoryToolError(error, 'invalid_path')) throw error;
    return error.message;
  }
}

describe('path policy: hostile paths are refused', () => {
  const hostile: Array<[why: string, path: string, messagePart: string]> = [
    ['outside the root', '/etc/passwd', 'outside the memory directory'],
    ['a sibling sharing the prefix', '/memoriesX/a', 'outside the memory directory'],
    ['a sibling with an underscore', '/memories_backup/a', 'outside the memory directory'],
    ['the prefix without a slash', '/memoriesX', 'outside the memory directory'],
    ['relative', 'memories/a.md', 'outside the memory directory'],
    ['empty', '', 'empty'],
    ['dot-dot escaping', '/memories/../etc/passwd', "'..' segment"],
    ['dot-dot staying inside', '/memories/a/../b.md', "'..' segment"],
    ['dot-dot to the root', '/memories/x/..', "'..' segment"],
    ['trailing dot-dot', '/memories/..', "'..' segment"],
    ['backslash traversal', '/memories/..\\etc', 'backslash'],
    ['backslash separator', '/memories\\a.md', 'backslash'],
    ['NUL', '/memories/a\u0000.md', 'control'],
    ['newline', '/memories/a\n.md', 'control'],
    ['tab', '/memories/a\t.md', 'control'],
    ['DEL', '/memories/a\u007f', 'control'],
    ['C1 control', '/memories/a\u0085', 'control'],
    ['bidi override', '/memories/\u202egnp.exe', 'control'],
    ['zero-width space', '/memories/a\u200b.md', 'control'],
    ['lone surrogate', '/memories/a\ud800.md', 'control'],
    ['encoded traversal, lower case', '/memories/%2e%2e%2fetc', 'percent-encoded'],
    ['encoded traversal, upper case', '/memories/%2E%2E%2Fetc', 'percent-encoded'],
    ['encoded traversal, mixed case', '/memories/%2e%2E/etc', 'percent-encoded'],
    ['encoded slash only', '/memories/..%2fetc', 'percent-encoded'],
    ['encoded backslash', '/memories/..%5cetc', 'percent-encoded'],
    ['double-encoded dot', '/memories/%252e%252e/etc', 'percent-encoded'],
    ['double-encoded slash', '/memories/..%252fetc', 'percent-encoded'],
    ['encoded NUL', '/memories/a%00.md', 'percent-encoded'],
    ['overlong UTF-8 dot', '/memories/%c0%ae%c0%ae/etc', 'percent-encoded'],
    ['overlong UTF-8 three bytes', '/memories/%e0%80%ae', 'percent-encoded'],
    ['IIS %u encoding', '/memories/%u002e%u002e/etc', 'percent-encoded'],
  ];

  it.each(hostile)('refuses %s: %j', (_why, path, messagePart) => {
    const message = refusal(path);
    expect(message).toContain(messagePart);
    expect(message.startsWith('Error: ')).toBe(true);
  });

  it('refuses a path longer than maxPathLength without echoing it', () => {
    const path = `/memories/${'a/'.repeat(600)}x`;
    const message = refusal(path);
    expect(message).toContain('over the limit of 1024 characters');
    expect(message).not.toContain('a/a/a');
    expect(refusal('/memories/abcdef', { maxPathLength: 10 })).toContain('limit of 10');
  });

  it('refuses a name longer than maxNameLength UTF-8 bytes', () => {
    expect(refusal(`/memories/${'n'.repeat(256)}`)).toContain('256 bytes long');
    // 128 two-byte characters are 256 bytes although only 128 characters.
    expect(refusal(`/memories/${'é'.repeat(128)}`)).toContain('256 bytes long');
    expect(parseMemoryPath(`/memories/${'n'.repeat(255)}`)).toBe('n'.repeat(255));
  });

  it('escapes control characters when it echoes a refused path', () => {
    const message = refusal('/memories/a\nb');
    expect(message).toContain('/memories/a\\u000ab');
    expect(message).not.toContain('\n');
  });

  it('refuses non-string input', () => {
    expect(refusal(42 as unknown as string)).toContain('must be a string');
  });
});

describe('path policy: equivalent spellings map to one canonical path', () => {
  const spellings: Array<[path: string, storePath: string]> = [
    ['/memories', ''],
    ['/memories/', ''],
    ['/memories/.', ''],
    ['/memories/./', ''],
    ['//memories', ''],
    ['/memories//', ''],
    ['/memories/notes/a.md', 'notes/a.md'],
    ['/memories/notes/a.md/', 'notes/a.md'],
    ['/memories//notes///a.md', 'notes/a.md'],
    ['/memories/./notes/./a.md', 'notes/a.md'],
    // NFD (e + combining acute) and NFC spell the same name.
    ['/memories/cafe\u0301.md', 'caf\u00e9.md'],
    ['/memories/caf\u00e9.md', 'caf\u00e9.md'],
  ];

  it.each(spellings)('%j -> %j', (path, storePath) => {
    expect(parseMemoryPath(path)).toBe(storePath);
  });

  it('keeps harmless unusual names literally (no decoding anywhere)', () => {
    expect(parseMemoryPath('/memories/100%20done.md')).toBe('100%20done.md');
    expect(parseMemoryPath('/memories/...')).toBe('...');
    expect(parseMemoryPath('/memories/.hidden')).toBe('.hidden');
    expect(parseMemoryPath('/memories/a b/ü.md')).toBe('a b/ü.md');
  });

  it('toVirtualPath is the inverse for canonical paths', () => {
    expect(toVirtualPath('')).toBe('/memories');
    expect(toVirtualPath('notes/a.md')).toBe('/memories/notes/a.md');
    for (const [path] of spellings) {
      const storePath = parseMemoryPath(path);
      expect(parseMemoryPath(toVirtualPath(storePath))).toBe(storePath);
    }
  });

  it('displayPath cuts long paths', () => {
    expect(displayPath('x'.repeat(300))).toHaveLength(203);
  });
});
