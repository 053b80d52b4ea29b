import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createFileSystemStore } from '@baton/core';
import { describeMemoryStoreConformance } from '@baton/core/testing';

describeMemoryStoreConformance('FileSystemStore', async ({ limits }) => {
  const directory = await mkdtemp(join(tmpdir(), 'baton-fs-store-'));
  const store = await createFileSystemStore({
    root: join(directory, 'memories'),
    ...(limits === undefined ? {} : { limits }),
  });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
});
