import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileProjectLog, openFileProjectLog } from '../src/index.js';
import { newProjectRecord } from './support/project-log-conformance.js';

/** A project.json as `baton run` wrote it before version 2. */
async function writeVersion1(home: string, id: string, fields: Record<string, unknown>) {
  const dir = path.join(home, 'projects', id);
  await mkdir(path.join(dir, 'memories'), { recursive: true });
  await writeFile(
    path.join(dir, 'project.json'),
    JSON.stringify({
      id,
      goal: '- one\n- two',
      workspace: path.join(dir, 'workspace'),
      createdAt: '2026-11-30T10:00:00.000Z',
      sessions: 3,
      running: false,
      lastOutcome: 'completed',
      ...fields,
    }),
  );
  return dir;
}

describe('local projects are upgraded once, never read in an old shape', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(path.join(os.tmpdir(), 'baton-upgrade-'));
  });
  afterEach(async () => {
    await rm(home, { recursive: true, force: true });
  });

  it('turns a version 1 record into the ProjectRecord workers keep, and records the migration', async () => {
    const dir = await writeVersion1(home, 'old', {
      totals: { inputTokens: 10, outputTokens: 5, costUsd: 0.5 },
      maxSessionsWithoutProgress: 4,
      sessionsWithoutProgress: 2,
      statusReason: 'no_progress: 2 sessions',
      repo: null,
      lastCheckpoint: 'abc',
    });
    await writeFile(
      path.join(dir, 'memories', 'features.json'),
      JSON.stringify([{ passes: true }, { passes: false }]),
    );
    await writeVersion1(home, 'crashed', { running: true });
    const log = await openFileProjectLog({ home });
    expect(await log.require('old')).toMatchObject({
      status: 'paused',
      statusReason: 'no_progress: 2 sessions',
      budgets: { maxSessionsWithoutProgress: 4 },
      counters: {
        sessions: 3,
        featuresPassing: 1,
        featuresTotal: 2,
        inputTokens: 10,
        costUsd: 0.5,
        sessionsWithoutProgress: 2,
      },
      activeSession: null,
      lastCheckpoint: 'abc',
      branch: 'baton/old',
      createdAt: Date.parse('2026-11-30T10:00:00.000Z'),
    });
    // A session that never finished: the next one is told it was interrupted and keeps its number.
    expect(await log.require('crashed')).toMatchObject({
      status: 'running',
      counters: { sessions: 2, sessionsStarted: 3 },
      activeSession: { sessionNumber: 3 },
    });
    expect(JSON.parse(await readFile(path.join(home, 'migrations.json'), 'utf8'))).toEqual({
      applied: [
        '2026-12-03-local-project-record-v2',
        '2026-12-04-local-project-record-defaults',
        '2026-12-04-local-session-summary-fields',
        '2026-12-04-local-event-fields',
        '2026-12-04-local-session-summary-commits',
        '2026-12-04-local-event-defaults',
      ],
    });
  });

  it('fills in what a version 2 record written before a field or counter existed left out, once', async () => {
    const log = await openFileProjectLog({ home });
    const created = await log.create(newProjectRecord('v2'));
    // As an earlier version wrote it: no verification, no adoption, fewer counters; its
    // migrations.json knew only the version 2 upgrade.
    const { verification, adoptWorkspace, ...older } = created;
    const { featuresVerified, uselessContextFills, ...counters } = created.counters;
    void [verification, adoptWorkspace, featuresVerified, uselessContextFills];
    const file = path.join(home, 'projects', 'v2', 'project.json');
    await writeFile(file, JSON.stringify({ v: 2, project: { ...older, counters } }));
    await writeFile(
      path.join(home, 'migrations.json'),
      JSON.stringify({ applied: ['2026-12-03-local-project-record-v2'] }),
    );
    // Readers assume the current shape: before the migration the fields are simply absent.
    const before = await createFileProjectLog({ home }).require('v2');
    expect(before.verification).toBeUndefined();
    expect(before.counters.featuresVerified).toBeUndefined();

    const upgraded = await (await openFileProjectLog({ home })).require('v2');
    expect(upgraded).toEqual(created);
    expect(JSON.parse(await readFile(path.join(home, 'migrations.json'), 'utf8'))).toEqual({
      applied: [
        '2026-12-03-local-project-record-v2',
        '2026-12-04-local-project-record-defaults',
        '2026-12-04-local-session-summary-fields',
        '2026-12-04-local-event-fields',
        '2026-12-04-local-session-summary-commits',
        '2026-12-04-local-event-defaults',
      ],
    });
  });

  it('runs once: a version 1 file that appears later is refused in one line, not interpreted', async () => {
    await openFileProjectLog({ home });
    await writeVersion1(home, 'late', {});
    const log = await openFileProjectLog({ home });
    await expect(log.get('late')).rejects.toThrow(
      /project\.json is not a version 2 project record; it was written by another version of baton/,
    );
  });
});
