import { afterEach, beforeEach } from 'vitest';
import { Redis } from 'ioredis';
import { scripts } from '../../src/internal/scripts.js';
import { deletePrefix, randomHex, REDIS_URL } from '@baton/test-support';
import {
  ProjectRepository,
  createBatonControl,
  createKeys,
  type BatonControl,
} from '../../src/index.js';

/** A fresh `{hash tag}` prefix so every test has its own queues and project keys. */
export function randomPrefix(): string {
  return `{bt-${randomHex(5)}}`;
}

export function randomProjectId(label = 'p'): string {
  return `${label}-${randomHex(5)}`;
}

/** What each test of a `useControlWorld()` suite gets, on a private prefix. */
export interface ControlWorld {
  prefix: string;
  control: BatonControl;
  /** A connection of the test's own (for raw commands and the repository). */
  redis: Redis;
  /** The repository on the same prefix, for writes the control API does not offer. */
  repository: ProjectRepository;
}

/**
 * Registers the set-up and clean-up of a control API on a private prefix around each test of
 * the suite; the returned object holds the current test's world.
 */
export function useControlWorld(): ControlWorld {
  const world = {} as ControlWorld;
  beforeEach(() => {
    world.prefix = randomPrefix();
    world.control = createBatonControl({ url: REDIS_URL, prefix: world.prefix });
    world.redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    world.repository = new ProjectRepository({
      redis: world.redis,
      keys: createKeys(world.prefix),
    });
  });
  afterEach(async () => {
    await world.control.close();
    world.redis.disconnect();
    await deletePrefix(world.prefix);
    await deletePrefix(`${world.control.keys.memoryPrefix}:`);
  });
  return world;
}

/** A command of the real client, as a `proxied` override gets it. */
export type RealCommand = (...args: unknown[]) => Promise<unknown>;

/**
 * `target` with the commands named in `overrides` replaced, each called with the real command and
 * the arguments (a script's command is `scripts.script(name).command`).
 */
export function proxied(
  target: Redis,
  overrides: Record<string, (real: RealCommand, ...args: unknown[]) => Promise<unknown>>,
): Redis {
  scripts.pipeline(target); // registers the scripts on the real client, as `scripts.call` does
  return new Proxy(target, {
    get(real, property) {
      const value: unknown = Reflect.get(real, property, real);
      const bound = typeof value === 'function' ? (value as RealCommand).bind(real) : value;
      const override = typeof property === 'string' ? overrides[property] : undefined;
      if (override === undefined) return bound;
      return (...args: unknown[]) => override(bound as RealCommand, ...args);
    },
  });
}
