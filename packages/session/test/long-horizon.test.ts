import { afterEach, describe, expect, it } from 'vitest';
import {
  readFeatures,
  readProgressArchives,
  readProgressEntries,
  runSession,
  type SessionResult,
} from '../src/index.js';
import { createHarness, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const FEATURES = 120;
const RERUNS = 2;
const LONG_GOAL = [
  'A long project: one greeting per case.',
  ...Array.from({ length: FEATURES }, (_, index) => `- Greeting case ${index + 1} prints its line`),
].join('\n');

function inputTokens(result: SessionResult): number {
  const usage = result.usage;
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
}

describe('a project of 120 features runs to the end on the simulator', () => {
  it('flips one feature per session, keeps the log whole and rolled over, and a session costs the same at the end as at the start', async () => {
    harness = await createHarness({}, { git: false });
    const h = harness;
    // The check record is carried from session to session, as the session chain does: each
    // session re-runs at most `regressionChecksPerSession` checks (2 here, to keep the test's
    // sandbox runs few; the default is measured by bench:long-horizon), so its cost stays flat.
    let checks: SessionResult['checks'] = {};
    const run = async (sessionNumber: number) => {
      const result = await runSession(
        h.options({
          project: { id: 'long', goal: LONG_GOAL },
          kind: sessionNumber === 1 ? 'init' : 'resume',
          sessionNumber,
          verification: { previous: checks, regressionChecksPerSession: RERUNS },
        }),
      );
      checks = result.checks;
      return result;
    };
    const results: SessionResult[] = [await run(1)];
    expect(results[0]).toMatchObject({ outcome: 'completed', featuresAfter: { total: FEATURES } });
    for (let number = 2; number <= FEATURES + 5; number += 1) {
      const result = await run(number);
      results.push(result);
      if (result.allFeaturesPass) break;
    }
    const resumes = results.slice(1);
    expect(resumes).toHaveLength(FEATURES);
    expect(resumes.map((result) => result.flippedFeatures)).toEqual(
      Array.from({ length: FEATURES }, (_, index) => [`F${index + 1}`]),
    );
    expect(resumes.every((result) => result.outcome === 'completed')).toBe(true);
    // The agent wrote every entry itself; no session needed Baton's filler.
    expect(results.every((result) => result.progressEntry === 'agent')).toBe(true);
    expect((await readFeatures(h.store))?.every((feature) => feature.passes)).toBe(true);

    // Every flip was verified; a session re-ran a bounded number of earlier checks, except the
    // last one, which re-ran all of them before the project may complete.
    const reruns = resumes.map((result) => result.verification?.rerun ?? -1);
    expect(Math.max(...reruns.slice(0, -1))).toBe(RERUNS);
    // Without checkpoints no evidence names the final commit, so the last one re-runs them all.
    expect(reruns.at(-1)).toBe(FEATURES);
    expect(resumes.at(-1)?.verification).toMatchObject({
      verified: FEATURES,
      claimed: 0,
      regressed: 0,
      pending: 0,
    });

    // Bounded orientation: the last sessions cost what the first ones did.
    const first = resumes.slice(0, 10).reduce((sum, result) => sum + inputTokens(result), 0);
    const last = resumes.slice(-10).reduce((sum, result) => sum + inputTokens(result), 0);
    expect(last / first).toBeLessThanOrEqual(1.2);
    expect(Math.max(...resumes.map((result) => result.turns))).toBeLessThanOrEqual(12);

    // The log rolled over and lost nothing: an entry for every session, in order.
    const progress = (await h.store.read('progress.md')) ?? '';
    expect(progress.length).toBeLessThan(10_000);
    expect((await readProgressArchives(h.store)).length).toBeGreaterThan(1);
    const sessions = (await readProgressEntries(h.store)).map((entry) => entry.session);
    for (let number = 1; number <= results.length; number += 1) {
      expect(sessions).toContain(number);
    }
    expect([...sessions].sort((left, right) => (left ?? 0) - (right ?? 0))).toEqual(sessions);

    // A session after the end ends promptly: no tool call in its working phase.
    const extra = await run(results.length + 1);
    expect(extra.outcome).toBe('completed');
    expect(extra.flippedFeatures).toEqual([]);
    const extraTurns = h.events.filter(
      (event) => event.sessionId === extra.sessionId && event.type === 'turn',
    );
    expect(
      extraTurns.filter((event) => event.type === 'turn' && event.phase === 'work'),
    ).toHaveLength(1);
    expect(extra.turns).toBeLessThanOrEqual(3);
  }, 900_000);
});

describe('a session that leaves no progress entry gets one from Baton', () => {
  it('writes a marked entry with the outcome, the turns, the tools and the features', async () => {
    // The simulator refuses the second request: the agent never reaches its log.
    harness = await createHarness(
      { faults: { refusalOn: [2] } },
      { initialised: true, git: false },
    );
    const h = harness;
    const before = (await readProgressEntries(h.store)).length;
    const result = await runSession(h.options({ kind: 'resume', sessionNumber: 2 }));
    expect(result.outcome).toBe('refused');
    expect(result.progressEntry).toBe('baton');
    const entries = await readProgressEntries(h.store);
    expect(entries).toHaveLength(before + 1);
    const entry = entries[entries.length - 1]!;
    expect(entry.heading).toBe('Session 2 (written by Baton: the agent left no progress entry)');
    expect(entry.text).toContain(`ended refused (refusal) after 2 turns`);
    expect(entry.text).toContain('- Tools used: memory 1.');
    expect(entry.text).toContain('- Features flipped: none; 0 of 3 pass.');
    expect(entry.text).toContain('- Next: F1 (Add a todo with a title).');
    expect(
      h.events.some(
        (event) =>
          event.type === 'memory-change' &&
          event.change.path === '/memories/progress.md' &&
          event.sessionId === result.sessionId,
      ),
    ).toBe(true);

    // A session that writes its own entry gets none from Baton.
    h.sim.setFaults({});
    const next = await runSession(h.options({ kind: 'resume', sessionNumber: 3 }));
    expect(next.progressEntry).toBe('agent');
    expect(
      (await readProgressEntries(h.store)).filter((item) =>
        item.heading.includes('written by Baton'),
      ),
    ).toHaveLength(1);
  });
});
