import { access, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isPortFree, startRedisServer } from '../src/index.js';

describe('stop', () => {
  it('ends the process, frees the port and removes the directory it made', async () => {
    const server = await startRedisServer({ appendOnly: true });
    expect(await isPortFree(server.port)).toBe(false);
    await server.stop();
    expect(server.running).toBe(false);
    expect(await isPortFree(server.port)).toBe(true);
    await expect(access(server.directory)).rejects.toThrow(/ENOENT/);
    await expect(server.restart()).rejects.toThrow(/was stopped; start a new one/);
    // A second stop is harmless.
    await server.stop();
  });

  it('keeps a directory the caller gave it', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-test-support-'));
    try {
      const server = await startRedisServer({ appendOnly: true, directory });
      await server.stop();
      expect(await isPortFree(server.port)).toBe(true);
      expect(await readdir(directory)).toContain('appendonlydir');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
