import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { deletePrefix, REDIS_URL } from '@baton/test-support';
import { ProjectRepository, createFileProjectLog, createKeys } from '../src/index.js';
import { describeProjectLogConformance } from './support/project-log-conformance.js';
import { randomPrefix } from './support/redis.js';

describeProjectLogConformance('ProjectRepository (Redis)', async () => {
  const prefix = randomPrefix();
  const redis = new Redis(REDIS_URL);
  return {
    log: new ProjectRepository({ redis, keys: createKeys(prefix) }),
    cleanup: async () => {
      redis.disconnect();
      await deletePrefix(prefix);
    },
  };
});

describeProjectLogConformance('FileProjectLog (BATON_HOME)', async () => {
  const home = await mkdtemp(path.join(os.tmpdir(), 'baton-project-log-'));
  return {
    log: createFileProjectLog({ home }),
    cleanup: () => rm(home, { recursive: true, force: true }),
  };
});
