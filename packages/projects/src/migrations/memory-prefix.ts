/**
 * The `2026-12-04-memory-prefix` migration: memory keys follow `BATON_PREFIX`.
 *
 * Every earlier version kept every deployment's memory under storage-redis's default prefix,
 * `baton:{<project id>}:...`, whatever `BATON_PREFIX` said, so two deployments on one Redis with a
 * project of the same id shared its memory and its fence. Now a deployment's memory lives under
 * `keys.memoryPrefix` (`{acme}` → `acme:{<project id>}:...`; the default `{baton}` → `baton`, where
 * it always was, so the default deployment has nothing to move).
 *
 * A deployment with another prefix takes, by RENAMENX, the old keys of the projects it holds
 * (a project hash under its own prefix). The old and new key of a namespace carry the same
 * `{<project id>}` hash tag, so each rename stays in one Cluster slot. Who takes a namespace that
 * several deployments used is decided once, never by a race, and never silently:
 * - a project id the default deployment (`{baton}`) also holds: its memory stays where that
 *   deployment keeps reading it;
 * - otherwise the first deployment to migrate claims it (`SET <old base>moved-to <new prefix> NX`,
 *   kept as a marker) and moves every key; a later one finds the marker and moves nothing;
 * - a key whose new name exists already is left where it is.
 * Each of those is reported in one line naming the projects (`report`); their projects continue
 * under the new prefix without that memory (a session re-creates a missing checklist from the goal).
 * The namespace's fence (its meta hash's `fence` field, includes/lib.lua in storage-redis) goes:
 * the tokens another deployment's leases wrote there are not comparable with this one's, and no
 * session of this deployment runs while its migrations do.
 */
import { createNamespaceKeys, isCluster, type RedisClient } from '@baton/storage-redis';
import { execPipeline } from '../internal/pipeline.js';
import { createKeys } from '../keys.js';
import type { MigrationContext } from './redis-migrations.js';

/** The marker a deployment that moved a namespace leaves behind: `<old base>moved-to`. */
const MOVED_TO = 'moved-to';

/** Keys asked for per SCAN call, and ids checked per round trip. */
const SCAN_COUNT = 1000;
const BATCH = 500;

export async function moveMemoryToDeploymentPrefix(context: MigrationContext): Promise<void> {
  const { redis, keys, legacyMemoryPrefix: from, report } = context;
  const to = keys.memoryPrefix;
  if (from === to) return;
  const namespaces = [...(await legacyNamespaces(redis, from, () => true))];
  const ours = await heldProjects(redis, keys.projects, namespaces);
  if (ours.length === 0) return;

  // The deployment that kept memory under `from` all along (`{baton}` for `baton`) keeps it.
  const legacyDeployment = createKeys(`{${from}}`);
  const keptThere = await existing(redis, ours.map(legacyDeployment.project));
  const claimed = new Set<string>();
  const takenElsewhere: string[] = [];
  for (const [index, id] of ours.entries()) {
    if (keptThere[index] === true) continue;
    const marker = createNamespaceKeys(id, from).base + MOVED_TO;
    const holder = (await redis.set(marker, to, 'NX')) === 'OK' ? to : await redis.get(marker);
    if (holder === to) claimed.add(id);
    else takenElsewhere.push(`${id} (to ${holder ?? '?'}:{${id}})`);
  }

  const notMoved = new Map<string, number>();
  /** Namespaces whose meta hash this run moved: only their fence is this run's to clear. */
  const movedMeta = new Set<string>();
  await legacyNamespaces(
    redis,
    from,
    (id) => claimed.has(id),
    async (found) => {
      // One pipeline per namespace: a Cluster pipeline stays in one slot.
      for (const [id, names] of found) {
        context.checkLock();
        const source = createNamespaceKeys(id, from);
        const target = createNamespaceKeys(id, to).base;
        const rename = redis.pipeline();
        const moving = names.filter((key) => key !== source.base + MOVED_TO);
        for (const key of moving) rename.renamenx(key, target + key.slice(source.base.length));
        const replies = await execPipeline(rename);
        const refused = replies.filter((reply) => reply === 0).length;
        if (refused > 0) notMoved.set(id, (notMoved.get(id) ?? 0) + refused);
        if (replies[moving.indexOf(source.meta)] === 1) movedMeta.add(id);
      }
    },
  );
  // A runner whose lock ran out must not clear a fence that sessions of the runner that took
  // over (and finished) have set since: it stops here, and clears only what it moved itself.
  context.checkLock();
  for (const id of movedMeta) await redis.hdel(createNamespaceKeys(id, to).meta, 'fence');

  const kept = ours.filter((_, index) => keptThere[index] === true);
  const reasons: string[] = [];
  if (kept.length > 0)
    reasons.push(
      `${kept.join(', ')}: the deployment with BATON_PREFIX ${legacyDeployment.prefix} holds a project of the same id and keeps its memory under ${from}:{<id>}`,
    );
  if (takenElsewhere.length > 0)
    reasons.push(
      `${takenElsewhere.join(', ')}: another deployment on this Redis with a project of the same id migrated first and took the memory under ${from}:{<id>}`,
    );
  if (notMoved.size > 0)
    reasons.push(
      `${[...notMoved].map(([id, count]) => `${id} (${count} keys)`).join(', ')}: a key of the same name under ${to}:{<id>} exists already, so those keys stay under ${from}:{<id>}`,
    );
  if (reasons.length === 0) return;
  const projects = [
    ...new Set([
      ...kept,
      ...takenElsewhere.map((text) => text.split(' ')[0] ?? ''),
      ...notMoved.keys(),
    ]),
  ];
  report(
    `memory of ${projects.length} project(s) of BATON_PREFIX ${keys.prefix} was not moved to ${to}:{<id>}: ${reasons.join('; ')}. ` +
      `Those projects continue with what is under ${to}:{<id>} (docs/operations.md#memory-keys-follow-baton_prefix)`,
    projects,
  );
}

/**
 * The namespaces with a key under `from:{<namespace>}:` (one SCAN per master). With `each`, hands
 * it each page's keys of the namespaces `wanted` accepts, by namespace, as they are found.
 */
async function legacyNamespaces(
  redis: RedisClient,
  from: string,
  wanted: (namespace: string) => boolean,
  each?: (found: Map<string, string[]>) => Promise<void>,
): Promise<Set<string>> {
  const head = `${from}:{`;
  const pattern = `${head.replace(/[*?[\]\\]/gu, '\\$&')}*}:*`;
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  const namespaces = new Set<string>();
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
      cursor = next;
      const found = new Map<string, string[]>();
      for (const key of keys) {
        // Namespaces hold no braces: the first `}` after the head ends the hash tag.
        const id = key.slice(head.length, key.indexOf('}', head.length));
        if (!wanted(id)) continue;
        namespaces.add(id);
        found.set(id, [...(found.get(id) ?? []), key]);
      }
      if (each !== undefined && found.size > 0) await each(found);
    } while (cursor !== '0');
  }
  return namespaces;
}

/** Which of `ids` are projects of the deployment whose project set is `projects`. */
async function heldProjects(
  redis: RedisClient,
  projects: string,
  ids: string[],
): Promise<string[]> {
  const held: string[] = [];
  for (let start = 0; start < ids.length; start += BATCH) {
    const batch = ids.slice(start, start + BATCH);
    const scores = await redis.zmscore(projects, ...batch);
    batch.forEach((id, index) => {
      if (scores[index] !== null) held.push(id);
    });
  }
  return held.sort();
}

/** Whether each key exists (pipelined: the keys may live in different Cluster slots). */
async function existing(redis: RedisClient, keys: string[]): Promise<boolean[]> {
  const found: boolean[] = [];
  for (let start = 0; start < keys.length; start += BATCH) {
    const read = redis.pipeline();
    for (const key of keys.slice(start, start + BATCH)) read.exists(key);
    for (const reply of await execPipeline(read)) found.push(reply === 1);
  }
  return found;
}
