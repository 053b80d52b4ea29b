import { describe, expect, it } from 'vitest';
import { openCommandMonitor } from '@baton/test-support';
import { isProjectError, type ProjectPage, type ProjectRecord } from '../src/index.js';
import { useControlWorld } from './support/redis.js';

describe('pageProjects', () => {
  const world = useControlWorld();

  async function create(count: number, label: string, goal = 'build a thing') {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const id = `${label}-${String(index).padStart(3, '0')}`;
      await world.control.createProject({ id, goal: `${goal} ${index}` });
      ids.push(id);
    }
    return ids;
  }

  /** Pages through with `limit`, running `between` after each page (concurrent writes). */
  async function pageAll(
    query: Record<string, unknown>,
    between: (page: number) => Promise<unknown> = async () => undefined,
  ): Promise<ProjectRecord[]> {
    const seen: ProjectRecord[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 100; page++) {
      // The next page is read while the writes run, not only after them.
      const [result]: [ProjectPage, unknown] = await Promise.all([
        world.control.pageProjects({ ...query, cursor }),
        between(page),
      ]);
      seen.push(...result.projects);
      cursor = result.nextCursor;
      if (cursor === null) return seen;
    }
    throw new Error('paging never ended');
  }

  /** `created desc` order: newest first, ties broken by id (Z to A). */
  const sortKey = (project: ProjectRecord) =>
    `${String(project.createdAt).padStart(15, '0')}:${project.id}`;

  it('returns every project exactly once, newest first, while others are created meanwhile', async () => {
    const original = await create(40, 'old');
    let added = 0;
    const seen = await pageAll({ limit: 6 }, async () => {
      // Inserts land before the cursor (newer): an offset would shift and repeat rows.
      await create(3, `new${added++}`);
    });
    const ids = seen.map((project) => project.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of original) expect(ids).toContain(id);
    const keys = seen.map(sortKey);
    expect(keys).toEqual([...keys].sort().reverse());
    // The inserts happened: an unpaged read sees them all.
    expect((await world.control.countProjects()).total).toBe(40 + 3 * added);
  });

  it('pages oldest first and reaches the projects created while paging', async () => {
    await create(20, 'a');
    let round = 0;
    const seen = await pageAll({ limit: 5, order: 'asc' }, async () => {
      if (round < 2) await create(2, `late${round++}`);
    });
    const ids = seen.map((project) => project.id);
    expect(new Set(ids).size).toBe(ids.length);
    // Created after the cursor passed by: in order, at the end.
    expect(ids.slice(-4).sort()).toEqual(['late0-000', 'late0-001', 'late1-000', 'late1-001']);
    const keys = seen.map(sortKey);
    expect(keys).toEqual([...keys].sort());
  });

  it('filters by status from the server, with counts per status, as projects move', async () => {
    const ids = await create(24, 's');
    for (const id of ids.slice(0, 5)) await world.control.cancel(id);
    for (const id of ids.slice(5, 8)) await world.control.pause(id);
    expect(await world.control.countProjects()).toEqual({
      counts: { queued: 16, running: 0, paused: 3, completed: 0, failed: 0, cancelled: 5 },
      total: 24,
    });
    const stopped = await pageAll({ statuses: ['paused', 'cancelled'], limit: 3 });
    expect(stopped.map((project) => project.id).sort()).toEqual(ids.slice(0, 8).sort());
    const keys = stopped.map(sortKey);
    expect(keys).toEqual([...keys].sort().reverse());

    // Projects leaving the filter while it is paged are never shown twice, nor out of status.
    // The oldest queued ones are cancelled while the newest are paged: they drop out of the filter.
    const moving = ids.slice(8, 12);
    const moved: string[] = [];
    const queued = await pageAll({ statuses: ['queued'], limit: 4 }, async (page) => {
      const id = moving[page];
      if (id === undefined) return;
      await world.control.cancel(id);
      moved.push(id);
    });
    const queuedIds = queued.map((project) => project.id);
    expect(new Set(queuedIds).size).toBe(queuedIds.length);
    expect(queuedIds).toEqual(expect.arrayContaining(ids.slice(12)));
    for (const id of moving) expect(queuedIds.includes(id) || moved.includes(id)).toBe(true);
    expect((await world.control.countProjects()).counts.cancelled).toBe(5 + moved.length);
  });

  it('sorts by last status change and by id', async () => {
    const ids = await create(6, 'u');
    await world.control.cancel(ids[2]!);
    const recent = await world.control.pageProjects({ sort: 'updated', limit: 6 });
    const updatedKey = (project: ProjectRecord) =>
      `${String(project.statusAt).padStart(15, '0')}:${project.id}`;
    const keys = recent.projects.map(updatedKey);
    expect(keys).toEqual([...keys].sort().reverse());
    // The cancel moved it to the front (a project created in the same millisecond may tie).
    const cancelled = recent.projects.find((project) => project.id === ids[2])!;
    expect(cancelled.statusAt).toBe(Math.max(...recent.projects.map((p) => p.statusAt)));
    expect(recent.projects.findIndex((project) => project.id === ids[2])).toBeLessThan(
      recent.projects.filter((project) => project.statusAt === cancelled.statusAt).length,
    );
    const byId = await pageAll({ sort: 'id', order: 'asc', limit: 4 });
    expect(byId.map((project) => project.id)).toEqual([...ids].sort());
  });

  it('searches id and goal case-insensitively, page by page', async () => {
    await create(30, 'plain', 'write docs');
    await create(5, 'other', 'Build a PARSER for');
    await world.control.createProject({ id: 'parser-by-id', goal: 'something else' });
    const found = await pageAll({ search: 'parser', limit: 2 });
    expect(found.map((project) => project.id).sort()).toEqual(
      ['other-000', 'other-001', 'other-002', 'other-003', 'other-004', 'parser-by-id'].sort(),
    );
    expect((await world.control.pageProjects({ search: 'nothing matches this' })).projects).toEqual(
      [],
    );
  });

  it('reports what changed after a version of the change feed', async () => {
    const [first, second] = await create(2, 'c');
    const version = await world.control.projectChangeVersion();
    expect(await world.control.projectChanges(version)).toEqual({
      version,
      projects: [],
      removed: [],
      more: false,
    });
    await world.control.cancel(first!);
    await world.control.deleteProject(second!);
    const changes = await world.control.projectChanges(version);
    expect(changes.projects.map((project) => [project.id, project.status])).toEqual([
      [first, 'cancelled'],
    ]);
    expect(changes.removed).toEqual([second]);
    expect(changes.version).toBeGreaterThan(version);
    expect((await world.control.countProjects()).total).toBe(1);
    const limited = await world.control.projectChanges(0, { limit: 1 });
    expect(limited.more).toBe(true);
    expect(
      (await world.control.projectChanges(limited.version)).projects.length,
    ).toBeLessThanOrEqual(1);
  });

  it('costs the page, not the fleet: one script call per status, one HGETALL per row shown', async () => {
    const ids = await create(150, 'cost');
    for (const id of ids.slice(0, 40)) await world.control.cancel(id);
    await world.control.pageProjects({ limit: 1 }); // the one-time index check
    const monitor = await openCommandMonitor();
    try {
      const sent = await monitor.commandsSentBy(world.prefix, () =>
        world.control.pageProjects({ statuses: ['queued', 'cancelled'], limit: 10 }),
      );
      const commands = sent.map((entry) => entry.command);
      expect(commands.filter((command) => command === 'hgetall')).toHaveLength(10);
      expect(commands.filter((command) => /^eval(sha)?$/u.test(command))).toHaveLength(2);
      // Each index read asks for the page (plus one to know there is more), never the whole set.
      expect(
        sent.filter((entry) => entry.command === 'zrange').map((entry) => entry.args.at(-1)),
      ).toEqual(['11', '11']);
      expect(commands).not.toContain('keys');
      expect(commands).not.toContain('scan');
      expect(sent.length).toBeLessThanOrEqual(2 + 2 + 10);
    } finally {
      monitor.close();
    }
  });

  it('refuses a bad query with one line naming the field', async () => {
    const failures: string[] = [];
    for (const query of [
      { limit: 0 },
      { statuses: ['sleeping'] },
      { sort: 'goal' },
      { cursor: '../x' },
      { sort: 'id', cursor: '000000000000001:p' },
      { search: 'x'.repeat(201) },
      { page: 2 },
    ]) {
      try {
        await world.control.pageProjects(query);
        failures.push(`accepted ${JSON.stringify(query)}`);
      } catch (error) {
        if (!isProjectError(error) || error.code !== 'invalid_input') throw error;
        expect(error.message).not.toContain('\n');
        failures.push(error.message);
      }
    }
    expect(failures).toEqual([
      expect.stringContaining('limit'),
      expect.stringContaining('statuses.0'),
      expect.stringContaining('sort'),
      expect.stringContaining('cursor'),
      expect.stringContaining('cursor'),
      expect.stringContaining('search'),
      expect.stringContaining('page'),
    ]);
  });
});
