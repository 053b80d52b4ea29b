import { describe, expect, it } from 'vitest';
import { AccessRecords } from './access-records.js';

describe('AccessRecords', () => {
  it('answers the recorded version within the granularity and nothing after it', () => {
    const records = new AccessRecords(60_000);
    records.record('a.md', '1:1', performance.now());
    expect(records.recentVersion('a.md')).toBe('1:1');
    records.record('b.md', '1:2', performance.now() - 60_000);
    expect(records.recentVersion('b.md')).toBeUndefined();
    expect(records.size).toBe(1);
  });

  it('records nothing with granularity 0', () => {
    const records = new AccessRecords(0);
    records.record('a.md', '1:1', performance.now());
    expect(records.recentVersion('a.md')).toBeUndefined();
    expect(records.size).toBe(0);
  });

  it('keeps at most maxEntries paths, dropping the oldest recording first', () => {
    const records = new AccessRecords(60_000, 2);
    const now = performance.now();
    records.record('a.md', '1:1', now);
    records.record('b.md', '1:2', now);
    records.record('a.md', '1:3', now); // recorded again: now the newest
    records.record('c.md', '1:4', now);
    expect(records.recentVersion('b.md')).toBeUndefined();
    expect(records.recentVersion('a.md')).toBe('1:3');
    expect(records.recentVersion('c.md')).toBe('1:4');
  });

  it('forgets a path and everything below it, and nothing else', () => {
    const records = new AccessRecords(60_000);
    const now = performance.now();
    for (const path of ['dir', 'dir/a.md', 'dir/sub/b.md', 'dir2/c.md', 'dirt.md']) {
      records.record(path, '1:1', now);
    }
    records.forget('dir');
    expect(
      ['dir', 'dir/a.md', 'dir/sub/b.md', 'dir2/c.md', 'dirt.md'].map((path) =>
        records.recentVersion(path),
      ),
    ).toEqual([undefined, undefined, undefined, '1:1', '1:1']);
  });
});
