import { describe, expect, it } from 'vitest';
import { isMemoryToolError } from './memory-tool-error.js';
import { displayPath, parseMemoryPath, toVirtualPath } from './path-policy.js';
import { HOSTILE_MEMORY_PATHS } from './testing/hostile-paths.js';

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
  const hostile = HOSTILE_MEMORY_PATHS.map(
    ({ reason, path, messagePart }) => [reason, path, messagePart] as const,
  );

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
