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

    // Git: every session's checkpoints are commits on baton/todo, pushed, each naming its
    // session, and memory never gets ahead of the code (each feature's script is committed and
    // pushed by a checkpoint before its flip).
    const log = h.git('log', '--format=%H %s', 'baton/todo').trim().split('\n').reverse();
    expect(log.map((line) => line.slice(0, 40))).toEqual(
      results.flatMap((result) => result.commits),
    );
    results.forEach((result, index) => {
      expect(result.commits.length, `session ${index + 1}`).toBeGreaterThan(0);
      expect(result.checkpoint).toMatchObject({ pushed: true });
    });
    for (const line of log) expect(line).toMatch(/ baton: session \d \((init|resume)\) of todo: /);
    for (const [index, id] of ['f1', 'f2', 'f3'].entries()) {
      const added = h
        .git('log', '--format=%H', '--diff-filter=A', 'baton/todo', '--', `features/${id}.sh`)
        .trim();
      expect(added, id).toMatch(/^[0-9a-f]{40}$/);
      expect(resumes[index]!.commits).toContain(added);
    }
    expect(h.git('status', '--porcelain')).toBe('');
    const remote = path.join(h.dir, 'remotes', 'todo.git');
    expect(h.git('--git-dir', remote, 'rev-parse', 'baton/todo').trim()).toBe(
      results[results.length - 1]!.checkpoint?.head,
    );
    const checkpoints = h.events.filter((event) => event.type === 'checkpoint');
    expect(checkpoints.filter((event) => event.reason === 'end')).toHaveLength(4);
    expect(checkpoints.every((event) => event.pushed)).toBe(true);
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
