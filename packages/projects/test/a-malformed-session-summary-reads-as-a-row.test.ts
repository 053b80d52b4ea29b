/**
 * Session summaries are decoded where they are read (`listSessions`, `pageSessions`, a local
 * project's `listSessions`), as events are: one stored without a field readers need (here
 * `commits`, by an old process still running after the upgrade) reads as a row of outcome
 * `malformed` saying what was wrong, and the others read as stored; nothing throws.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileProjectLog } from '../src/index.js';
import { newProjectRecord, sessionSummary } from './support/project-log-conformance.js';
import { useControlWorld } from './support/redis.js';

const PROBLEM = 'commits: Invalid input: expected array, received undefined';

/** A summary as a process of a version before commit lists writes it after the upgrade. */
function withoutCommits(sessionNumber: number): string {
  const { commits: _dropped, ...old } = sessionSummary({ sessionId: 'old', sessionNumber });
  return JSON.stringify(old);
}

const malformedRow = (sessionNumber: number, problem = PROBLEM) =>
  expect.objectContaining({
    sessionId: sessionNumber === 0 ? '' : 'old',
    sessionNumber,
    kind: 'unknown',
    outcome: 'malformed',
    reason: `stored session summary is malformed (${problem})`,
    commits: [],
    malformed: problem,
  }) as unknown;

describe('a stored session summary the decoder cannot read', () => {
  const world = useControlWorld();

  it('reads as a malformed row from the control API, the others as stored', async () => {
    await world.control.createProject({ id: 'mixed', goal: 'Summaries of two versions' });
    const current = sessionSummary({ sessionId: 'new', sessionNumber: 1, commits: ['abc'] });
    await world.redis.rpush(
      world.control.keys.sessions('mixed'),
      JSON.stringify(current),
      withoutCommits(2),
      'not json',
    );

    const listed = await world.control.listSessions('mixed');
    expect(listed).toEqual([current, malformedRow(2), malformedRow(0, 'not JSON')]);
    const page = await world.control.pageSessions('mixed', { limit: 2 });
    expect(page.sessions).toEqual([malformedRow(2), malformedRow(0, 'not JSON')]);
    expect(page.total).toBe(3);
  });

  it('reads as a malformed row from a local project', async () => {
    const home = await mkdtemp(path.join(os.tmpdir(), 'baton-summaries-'));
    try {
      const log = await openFileProjectLog({ home });
      await log.create(newProjectRecord('mixed'));
      const current = sessionSummary({ sessionId: 'new', sessionNumber: 1 });
      const file = path.join(home, 'projects', 'mixed', 'sessions.jsonl');
      await writeFile(file, `${JSON.stringify(current)}\n${withoutCommits(2)}\n`);
      expect(await log.listSessions('mixed')).toEqual([current, malformedRow(2)]);
      expect(await readFile(file, 'utf8')).toContain('"sessionNumber":2');
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
