/**
 * What a worker checks about the Redis it runs on before and while it takes sessions: that Redis
 * never evicts keys (an evicting policy silently drops leases, job records, project indexes and
 * memory files), and that the data it started on is still there (a Redis restarted without
 * persistence comes back empty, and sessions still running would write fragments into it).
 *
 * The second check is a deployment marker: one key, written once with a random id, that every
 * worker reads at start and re-reads while it runs. Gone or changed means Redis lost its data.
 */
import { randomUUID } from 'node:crypto';
import type { BatonKeys } from './keys.js';
import { isCluster, type RedisClient } from '@baton/storage-redis';

/** The only policy under which Redis refuses writes instead of dropping keys when it is full. */
export const REQUIRED_EVICTION_POLICY = 'noeviction';

/** One Redis node's `maxmemory-policy` (a Cluster has one per master). */
export interface EvictionPolicy {
  /** `host:port`, or `redis` for a single node. */
  node: string;
  policy: string;
}

/**
 * Reads `maxmemory-policy` from `INFO memory` (which managed services that rename `CONFIG` still
 * answer), from every master of a Cluster.
 */
export async function readEvictionPolicies(redis: RedisClient): Promise<EvictionPolicy[]> {
  if (isCluster(redis)) {
    return Promise.all(
      redis.nodes('master').map(async (node) => ({
        node: `${node.options.host ?? '?'}:${node.options.port ?? '?'}`,
        policy: policyFromInfo(await node.info('memory')),
      })),
    );
  }
  return [{ node: 'redis', policy: policyFromInfo(await redis.info('memory')) }];
}

function policyFromInfo(info: string): string {
  return /^maxmemory_policy:(\S+)/mu.exec(info)?.[1] ?? 'unknown';
}

/** What is wrong with the policies, with the fix, or undefined when every node is `noeviction`. */
export function evictionProblem(policies: readonly EvictionPolicy[]): string | undefined {
  const evicting = policies.filter((entry) => entry.policy !== REQUIRED_EVICTION_POLICY);
  if (evicting.length === 0) return undefined;
  const which = evicting.map((entry) => `${entry.node} has ${entry.policy}`).join(', ');
  return (
    `Redis maxmemory-policy must be ${REQUIRED_EVICTION_POLICY} (${which}): any other policy ` +
    'drops leases, job records and memory files without a word when memory runs out. Fix: ' +
    '`redis-cli CONFIG SET maxmemory-policy noeviction` and `maxmemory-policy noeviction` in ' +
    "redis.conf (or your provider's parameter group); BATON_ALLOW_EVICTION=1 runs anyway"
  );
}

/** The deployment marker's content. */
export interface DeploymentMarker {
  /** Random id written once per Redis deployment (per prefix). */
  id: string;
  /** When it was written (ISO 8601). */
  createdAt: string;
}

/** Reads the marker; null when this Redis has none (new, or wiped). */
export async function readDeploymentMarker(
  redis: RedisClient,
  keys: BatonKeys,
): Promise<DeploymentMarker | null> {
  const raw = await redis.get(keys.deployment);
  if (raw === null) return null;
  try {
    const parsed = JSON.parse(raw) as Partial<DeploymentMarker>;
    if (typeof parsed.id === 'string' && typeof parsed.createdAt === 'string') {
      return { id: parsed.id, createdAt: parsed.createdAt };
    }
  } catch {
    // A marker someone overwrote by hand is no marker: treated like a missing one.
  }
  return null;
}

/** What `ensureDeploymentMarker` found. */
export interface DeploymentMarkerResult {
  marker: DeploymentMarker;
  /** True when this call wrote it (no marker was there). */
  created: boolean;
  /** When created: how many projects Redis already held (0 on a new or wiped Redis). */
  projectsBefore: number;
}

/** Writes a marker if there is none (`SET NX`) and returns the one in place. */
export async function ensureDeploymentMarker(
  redis: RedisClient,
  keys: BatonKeys,
): Promise<DeploymentMarkerResult> {
  const existing = await readDeploymentMarker(redis, keys);
  if (existing !== null) return { marker: existing, created: false, projectsBefore: 0 };
  const fresh: DeploymentMarker = { id: randomUUID(), createdAt: new Date().toISOString() };
  // Overwrites only an unreadable marker; a concurrent writer's valid one wins (NX below).
  if ((await redis.exists(keys.deployment)) === 1) await redis.del(keys.deployment);
  const set = await redis.set(keys.deployment, JSON.stringify(fresh), 'NX');
  const projectsBefore = await redis.zcard(keys.projects);
  if (set === 'OK') return { marker: fresh, created: true, projectsBefore };
  const winner = await readDeploymentMarker(redis, keys);
  return { marker: winner ?? fresh, created: false, projectsBefore: 0 };
}

/** What a running worker found when it re-read the marker. */
export type DeploymentCheck =
  { kind: 'same' } | { kind: 'missing' } | { kind: 'replaced'; marker: DeploymentMarker };

/** Compares the marker in Redis with the one the caller started on. */
export async function checkDeploymentMarker(
  redis: RedisClient,
  keys: BatonKeys,
  startedOn: DeploymentMarker,
): Promise<DeploymentCheck> {
  const current = await readDeploymentMarker(redis, keys);
  if (current === null) return { kind: 'missing' };
  if (current.id !== startedOn.id) return { kind: 'replaced', marker: current };
  return { kind: 'same' };
}

/** The sentence every entry point prints when Redis lost its data. */
export function describeLostDeployment(startedOn: DeploymentMarker): string {
  return (
    `Redis lost its data: the deployment marker written ${startedOn.createdAt} is gone (a restart ` +
    'without persistence, a FLUSHALL, or a failover to an empty replica). Projects, jobs, leases ' +
    'and memory files it held are gone; their code is safe on the branches baton/<project-id> of ' +
    "each repository (list them with `baton adopt --list <repo>`, or `git ls-remote <repo> 'refs/heads/baton/*'`): " +
    'adopt the lost projects again (`baton adopt <repo> baton/<id> --goal ...`), see docs/operations.md#redis-lost-its-data'
  );
}
