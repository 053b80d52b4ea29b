import { execPipeline, scriptPipeline } from '../internal/pipeline.js';
import { scripts } from '../internal/scripts.js';
import type { BatonKeys } from '../keys.js';
import type { ProjectPageQuery } from '../project-page.js';
import { PROJECT_STATUSES, type ProjectRecord, type ProjectStatus } from '../project.js';
import type { RedisClient } from '@baton/storage-redis';
import { parseProjectHash } from './project-hash.js';

export type { ProjectPageQuery } from '../project-page.js';

export interface ProjectPage {
  projects: ProjectRecord[];
  /**
   * Where the next page starts (the last project's sort key and id), or `null` after the last
   * page. A search page may hold fewer than `limit` projects and still have a cursor: each call
   * reads a bounded part of the index.
   */
  nextCursor: string | null;
}

/** How many projects there are, per status and in all. */
export interface ProjectCounts {
  counts: Record<ProjectStatus, number>;
  total: number;
}

/** The projects that changed after a version of the change feed. */
export interface ProjectChanges {
  /** Pass it to the next call. */
  version: number;
  /** The changed projects as they are now. */
  projects: ProjectRecord[];
  /** Changed projects that no longer exist. */
  removed: string[];
  /** More changes are waiting beyond `version` (call again at once). */
  more: boolean;
}

/** Index members read per script call: a search never holds Redis longer than this many reads. */
const PAGE_SCAN_CHUNK = 1_000;
/** Index members one page request reads at most before it returns a short page with a cursor. */
const PAGE_SCAN_LIMIT = 20_000;

/** The project id at the end of an index member (`<sort key>:<id>` or `<id>`). */
function memberId(member: string): string {
  return member.slice(member.lastIndexOf(':') + 1);
}

/**
 * The fleet seen as a whole: lex-ordered indexes per sort and status (kept by the create,
 * transition and delete scripts), counts per status and the change feed. Every read costs what
 * it returns, not the number of projects.
 */
export class FleetIndex {
  readonly #redis: RedisClient;
  readonly #keys: BatonKeys;

  constructor(options: { redis: RedisClient; keys: BatonKeys }) {
    this.#redis = options.redis;
    this.#keys = options.keys;
  }

  /**
   * One page of projects in index order after `cursor`. Each status is its own lex-ordered index,
   * so the page is a ZRANGE BYLEX per status from the cursor (merged here), then one HGETALL per
   * project shown: the cost follows the page, not the fleet. A cursor is a sort key and an id, so
   * projects created or moved meanwhile never shift or repeat the rows of later pages.
   */
  async page(query: ProjectPageQuery = {}): Promise<ProjectPage> {
    const sort = query.sort ?? 'created';
    const order = query.order ?? 'desc';
    const limit = query.limit ?? 50;
    const needle = (query.search ?? '').trim().toLowerCase();
    const statuses =
      query.statuses === undefined || query.statuses.length === 0
        ? ['all']
        : [...new Set(query.statuses)];
    const indexKeys = statuses.map((status) => this.#keys.projectIndex(sort, status));
    // `comesFirst(a, b)`: a is shown before b in this order.
    const comesFirst = (left: string, right: string) =>
      order === 'desc' ? left > right : left < right;
    const members: string[] = [];
    let cursor = query.cursor ?? '';
    let nextCursor: string | null = null;
    for (let scanned = 0; ; scanned += PAGE_SCAN_CHUNK) {
      const wanted = limit - members.length;
      const pipeline = scriptPipeline(this.#redis);
      for (const key of indexKeys) {
        scripts.queue(
          pipeline,
          'pageProjects',
          key,
          this.#keys.projectSearch,
          order,
          cursor,
          wanted + 1,
          needle,
          PAGE_SCAN_CHUNK,
        );
      }
      const replies = (await execPipeline(pipeline)) as [number, string, ...string[]][];
      // Every match up to the earliest "last read" of an unfinished index is known; past it, not yet.
      let bound: string | null = null;
      const merged: string[] = [];
      for (const [exhausted, last, ...matches] of replies) {
        merged.push(...matches);
        if (exhausted !== 1 && (bound === null || comesFirst(last, bound))) bound = last;
      }
      merged.sort((left, right) => (left === right ? 0 : comesFirst(left, right) ? -1 : 1));
      const known = bound === null ? merged : merged.filter((member) => !comesFirst(bound, member));
      if (known.length > wanted) {
        members.push(...known.slice(0, wanted));
        nextCursor = members[members.length - 1] ?? null;
        break;
      }
      members.push(...known);
      if (bound === null) break;
      cursor = bound;
      if (members.length >= limit || scanned + PAGE_SCAN_CHUNK >= PAGE_SCAN_LIMIT) {
        nextCursor = bound;
        break;
      }
    }
    const projects = await this.getMany(members.map(memberId));
    return { projects, nextCursor };
  }

  /** Projects per status, from the index (one ZCARD each). */
  async counts(): Promise<ProjectCounts> {
    const pipeline = this.#redis.pipeline();
    for (const status of PROJECT_STATUSES) pipeline.zcard(this.#keys.projectIndex('id', status));
    pipeline.zcard(this.#keys.projectIndex('id', 'all'));
    const replies = (await execPipeline(pipeline)) as number[];
    const counts = {} as Record<ProjectStatus, number>;
    PROJECT_STATUSES.forEach((status, index) => (counts[status] = replies[index] ?? 0));
    return { counts, total: replies[PROJECT_STATUSES.length] ?? 0 };
  }

  /** The current version of the change feed (0 before any change). */
  async changeVersion(): Promise<number> {
    return Number(await this.#redis.get(this.#keys.projectVersion)) || 0;
  }

  /**
   * The projects changed after `version` (status, counters, active session, checkpoint, deletion),
   * at most `limit` of them: O(changed) however many projects there are.
   */
  async changesSince(version: number, limit = 500): Promise<ProjectChanges> {
    const current = await this.changeVersion();
    if (current <= version) return { version: current, projects: [], removed: [], more: false };
    const reply = await this.#redis.zrangebyscore(
      this.#keys.projectChanges,
      `(${version}`,
      current,
      'WITHSCORES',
      'LIMIT',
      0,
      limit,
    );
    const ids: string[] = [];
    let last = version;
    for (let index = 0; index < reply.length; index += 2) {
      ids.push(reply[index] as string);
      last = Number(reply[index + 1]);
    }
    const more = ids.length >= limit;
    const projects = await this.getMany(ids);
    const present = new Set(projects.map((project) => project.id));
    return {
      version: more ? last : current,
      projects,
      removed: ids.filter((id) => !present.has(id)),
      more,
    };
  }

  /** Projects by id in the order given (one pipelined HGETALL each); ids without one are left out. */
  async getMany(ids: readonly string[]): Promise<ProjectRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.#keys.project(id));
    const hashes = (await execPipeline(pipeline)) as Record<string, string>[];
    const projects: ProjectRecord[] = [];
    for (const hash of hashes) {
      const project = parseProjectHash(hash);
      if (project !== null) projects.push(project);
    }
    return projects;
  }
}
