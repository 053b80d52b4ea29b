import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readFeatures, runSession, type SessionResult } from '../src/index.js';
import { createHarness, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('init then resume sessions finish every feature on the simulator', () => {
  it('writes the memory layout, flips one feature per session, commits each session and reports events', async () => {
    harness = await createHarness();
    const h = harness;
    const results: SessionResult[] = [];
    results.push(await runSession(h.options({ kind: 'init', sessionNumber: 1 })));
    const init = results[0]!;
    expect(init).toMatchObject({
      kind: 'init',
      outcome: 'completed',
      stopReason: 'end_turn',
      featuresAfter: { passing: 0, total: 3 },
    });

    const features = await readFeatures(h.store);
    expect(features?.map((feature) => [feature.id, feature.description, feature.passes])).toEqual([
      ['F1', 'Add a todo with a title', false],
      ['F2', 'List todos', false],
      ['F3', 'Mark a todo as done', false],
    ]);
    expect(await h.store.read('progress.md')).toContain('Session 1');
    expect(await h.store.read('startup.md')).not.toBeNull();

    for (
      let number = 2;
      number <= 5 && !results[results.length - 1]!.allFeaturesPass;
      number += 1
    ) {
      results.push(await runSession(h.options({ kind: 'resume', sessionNumber: number })));
    }
    const resumes = results.slice(1);
    expect(resumes.map((result) => result.flippedFeatures)).toEqual([['F1'], ['F2'], ['F3']]);
    expect(resumes.every((result) => result.outcome === 'completed')).toBe(true);
    expect(results[results.length - 1]).toMatchObject({
      allFeaturesPass: true,
      featuresAfter: { passing: 3, total: 3 },
    });

    // Memory: every feature passes, the log has an entry per session incl. the end-of-session entries.
    expect((await readFeatures(h.store))?.every((feature) => feature.passes)).toBe(true);
    const progress = (await h.store.read('progress.md')) ?? '';
    for (const number of [1, 2, 3, 4]) expect(progress).toContain(`Session ${number}`);

    // Git: one commit per session, naming the session and the flipped features.
    const log = h.git('log', '--format=%s').trim().split('\n').reverse();
    expect(log).toEqual([
      'baton: session 1 (init) of todo: no feature flipped',
      'baton: session 2 (resume) of todo: flipped F1',
      'baton: session 3 (resume) of todo: flipped F2',
      'baton: session 4 (resume) of todo: flipped F3',
    ]);
    expect(results.map((result) => result.commit?.sha)).toEqual(
      h.git('log', '--format=%H').trim().split('\n').reverse(),
    );
    expect(h.git('status', '--porcelain')).toBe('');
    const files = h.git('ls-files').trim().split('\n');
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(await readFile(path.join(h.workspace, files[0]!), 'utf8')).not.toBe('');

    // Events: typed, versioned, JSON-serialisable, in order per session.
    for (const event of h.events) {
      expect(event.v).toBe(1);
      expect(JSON.parse(JSON.stringify(event))).toEqual(event);
    }
    const types = h.events.map((event) => event.type);
    expect(types.filter((type) => type === 'session-start')).toHaveLength(4);
    expect(types.filter((type) => type === 'session-end')).toHaveLength(4);
    expect(types[0]).toBe('session-start');
    expect(types[types.length - 1]).toBe('session-end');
    expect(h.events.some((event) => event.type === 'tool-call' && event.tool === 'bash')).toBe(
      true,
    );
    expect(
      h.events.some(
        (event) => event.type === 'tool-call' && event.tool === 'str_replace_based_edit_tool',
      ),
    ).toBe(true);
    const flips = h.events.filter(
      (event) =>
        event.type === 'memory-change' &&
        event.change.path === '/memories/features.json' &&
        event.change.command === 'str_replace',
    );
    expect(flips).toHaveLength(3);
    const turnEvents = h.events.filter((event) => event.type === 'turn');
    expect(turnEvents.some((event) => event.type === 'turn' && event.phase === 'end')).toBe(true);
    const sessionEnd = h.events[h.events.length - 1];
    expect(sessionEnd?.type === 'session-end' && sessionEnd.result.turns).toBeGreaterThan(0);
  });
});
