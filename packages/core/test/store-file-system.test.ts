import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createFileSystemStore } from '@baton/core';
import { describeMemoryStoreConformance } from '@baton/core/testing';

for (const durability of ['full', 'data'] as const) {
  describeMemoryStoreConformance(
    `FileSystemStore (durability: ${durability})`,
    async ({ limits }) => {
      const directory = await mkdtemp(join(tmpdir(), 'baton-fs-store-'));
      const store = await createFileSystemStore({
        root: join(directory, 'memories'),
        durability,
        limits,
      });
      return {
        store,
        cleanup: async () => {
          await store.close();
          await rm(directory, { recursive: true, force: true });
        },
      };
    },
  );
}

describe('FileSystemStore options', () => {
  it('rejects an unknown durability', async () => {
    const directory = await mkdtemp(join(tmpdir(), 'baton-fs-store-'));
    await expect(
      createFileSystemStore({
        root: directory,
        durability: 'none' as unknown as 'full',
      }),
    ).rejects.toThrow(/durability/);
    await rm(directory, { recursive: true, force: true });
  });
});
