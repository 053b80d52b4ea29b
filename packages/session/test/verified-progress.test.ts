import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SimScriptRequest } from '@baton/model-sim';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type RunSessionOptions,
  type SessionEvent,
  type SessionResult,
  formatFeatures,
  readFeatures,
  runSession,
} from '../src/index.js';
import { createHarness, type Harness } from './helpers.js';

// Several real sessions with real git and real sandboxed checks per test: slow on a loaded machine.
vi.setConfig({ testTimeout: 180_000 });

let harness: Harness | undefined;
/** Every request the simulator answered in the current test (its scripted agent answers). */
let requests: SimScriptRequest[] = [];
afterEach(async () => {
  await harness?.close();
  harness = undefined;
  requests = [];
});

/** A harness whose simulator records the requests it gets. */
function recordingHarness(): Promise<Harness> {
  return createHarness({
    script: (request) => {
      requests.push(request);
      return undefined;
    },
  });
}

function evidenceEvents(events: readonly SessionEvent[]) {
  return events.flatMap((event) =>
    event.type === 'check-passed' || event.type === 'check-failed'
      ? [{ type: event.type, ...event.evidence }]
      : [],
  );
}

function toolErrors(requests: readonly SimScriptRequest[]): string[] {
  const messages = requests.flatMap((request) => request.params.messages);
  const errors = messages.flatMap((message) =>
    typeof message.content === 'string'
      ? []
      : (message.content ?? []).flatMap((block) =>
          block.type === 'tool_result' && block.is_error === true
            ? [typeof block.content === 'string' ? block.content : JSON.stringify(block.content)]
            : [],
        ),
  );
  return [...new Set(errors)];
}

/** Runs sessions 1..n of a project with `goal`, carrying the check record from one to the next. */
async function runSessions(
  h: Harness,
  goal: string,
  count: number,
  overrides: Partial<RunSessionOptions> = {},
): Promise<SessionResult[]> {
  const results: SessionResult[] = [];
  let lastCheckpoint: string | null = null;
  for (let index = 0; index < count; index += 1) {
    const previous = results[results.length - 1];
    const verification =
      overrides.verification === false
        ? false
        : { ...overrides.verification, previous: previous?.checks };
    const result = await runSession(
      h.options({
        ...overrides,
        project: { id: 'todo', goal },
        kind: index === 0 ? 'init' : 'resume',
        sessionNumber: index + 1,
        lastCheckpoint,
        verification,
      }),
    );
    lastCheckpoint = result.checkpoint?.head ?? lastCheckpoint;
    results.push(result);
  }
  return results;
}

describe('a flip to passing is verified before it is accepted', () => {
  it('refuses a false claim with the check output and exit code, then accepts the real work with evidence naming a pushed commit', async () => {
    harness = await recordingHarness();
    const h = harness;
    const goal = 'Todo app.\n- Add a todo [sim:claim-first]\n- List todos';
    const [init, resume] = await runSessions(h, goal, 2);
    expect(init?.outcome).toBe('completed');
    const features = await readFeatures(h.store);
    expect(features?.[0]?.check).toBe("sh features/f1.sh | grep -q 'F1 ok'");
    const runs = evidenceEvents(h.events);
    expect(runs.map((run) => `${run.type}:${run.featureId}:${run.trigger}`)).toEqual([
      'check-failed:F1:flip',
      'check-passed:F1:flip',
    ]);
    expect(runs[0]?.exitCode).not.toBe(0);
    expect(resume?.flippedFeatures).toEqual(['F1']);
    expect(resume?.checks?.F1?.status).toBe('verified');
    const commit = resume?.checks?.F1?.evidence?.commit;
    expect(commit).toMatch(/^[0-9a-f]{40}$/);
    // The commit the evidence names holds the work: it reached the project's remote.
    const remote = path.join(h.dir, 'remotes', 'todo.git');
    expect(h.git('--git-dir', remote, 'show', `${commit}:features/f1.sh`)).toContain('F1 ok');
    expect(resume?.verification).toMatchObject({ verified: 1, claimed: 0, regressed: 0 });
  });

  it('tells the model why: the refusal carries the exit code and the output tail', async () => {
    harness = await recordingHarness();
    const h = harness;
    const goal = 'Todo app.\n- Add a todo [sim:claim-first]';
    await runSessions(h, goal, 2);
    const refusal = toolErrors(requests).find((text) => text.includes('check of F1'));
    expect(refusal).toMatch(/^Refused: Baton ran the check of F1 \(`sh features\/f1\.sh/);
    expect(refusal).toMatch(/failed \(exit code 1, /);
    expect(refusal).toContain('F1 stays failing and nothing was written');
    expect(refusal).not.toContain(h.dir);
  });

  it('without verification the same lie is accepted (what verification prevents)', async () => {
    harness = await recordingHarness();
    const h = harness;
    const goal = 'Todo app.\n- Add a todo [sim:claim-first]';
    const [, resume] = await runSessions(h, goal, 2, { verification: false });
    expect(resume?.flippedFeatures).toEqual(['F1']);
    expect(resume?.allFeaturesPass).toBe(true);
    expect(h.git('ls-files')).not.toContain('features/f1.sh');
  });

  it('a feature without a check is accepted as claimed; requireChecks refuses it', async () => {
    harness = await recordingHarness();
    const goal = 'Todo app.\n- Add a todo [sim:no-check]';
    const [, claimed] = await runSessions(harness, goal, 2);
    expect(claimed?.checks?.F1).toEqual({ status: 'claimed', evidence: null });
    expect(claimed?.verification).toMatchObject({ verified: 0, claimed: 1 });
    await harness.close();

    harness = await recordingHarness();
    const h = harness;
    const [, refused] = await runSessions(h, goal, 2, { verification: { requireChecks: true } });
    expect(refused?.flippedFeatures).toEqual([]);
    expect((await readFeatures(h.store))?.[0]?.passes).toBe(false);
    expect(toolErrors(requests).join('\n')).toContain(
      'F1 has no "check" and this project requires one',
    );
  });

  it('a project default check runs for features without one, with BATON_FEATURE_ID set', async () => {
    harness = await recordingHarness();
    const h = harness;
    const goal = 'Todo app.\n- Add a todo [sim:no-check]';
    const [, resume] = await runSessions(h, goal, 2, {
      verification: { defaultCheck: 'test "$BATON_FEATURE_ID" = F1 && sh features/f1.sh' },
    });
    expect(resume?.checks?.F1?.status).toBe('verified');
    expect(resume?.checks?.F1?.evidence?.command).toContain('BATON_FEATURE_ID');
  });
});

describe('checks run like any command', () => {
  async function initialisedWithCheck(h: Harness, check: string): Promise<void> {
    await h.store.write(
      'features.json',
      formatFeatures([
        { id: 'F1', description: 'Add a todo', steps: ['sh features/f1.sh'], check, passes: false },
      ]),
      { mode: 'create' },
    );
    await h.store.write('progress.md', '# Progress log\n\n## Session 1\n- Initialised.\n', {
      mode: 'create',
    });
    await h.store.write('startup.md', '# Startup\n', { mode: 'create' });
  }

  it('a check that hangs is killed at its timeout and counts as failed', async () => {
    harness = await recordingHarness();
    const h = harness;
    await initialisedWithCheck(h, 'sleep 60');
    const started = Date.now();
    const result = await runSession(
      h.options({ sessionNumber: 2, verification: { checkTimeoutMs: 1_000 } }),
    );
    expect(Date.now() - started).toBeLessThan(30_000);
    const [run] = evidenceEvents(h.events);
    expect(run).toMatchObject({ type: 'check-failed', stopped: 'timeout', passed: false });
    expect(result.flippedFeatures).toEqual([]);
    expect(toolErrors(requests).join('\n')).toContain('did not finish within');
  });

  it('a check that reaches outside the workspace is contained (the canary is untouched)', async () => {
    harness = await recordingHarness();
    const h = harness;
    const canary = path.join(h.dir, 'canary.txt');
    await writeFile(canary, 'untouched\n');
    await initialisedWithCheck(
      h,
      `echo pwned > ${canary}; cat ${canary}; rm -f ${canary}; sh features/f1.sh`,
    );
    const result = await runSession(h.options({ sessionNumber: 2 }));
    expect(await readFile(canary, 'utf8')).toBe('untouched\n');
    // The check itself ran (and passed on the work); only the host stayed out of reach.
    expect(result.checks?.F1?.status).toBe('verified');
  });
});

describe('regressions are caught at the end of a session', () => {
  it('a feature broken by a later session is flipped back, logged by Baton, named first next session, then fixed', async () => {
    harness = await recordingHarness();
    const h = harness;
    const goal = 'Todo app.\n- Add a todo\n- List todos [sim:breaks F1]\n- Mark done';
    const results = await runSessions(h, goal, 4);
    const third = results[2]!;
    expect(third.flippedFeatures).toEqual(['F2']);
    expect(third.verification?.regressedIds).toEqual(['F1']);
    expect(third.checks?.F1?.status).toBe('regressed');
    expect(third.checks?.F1?.evidence?.trigger).toBe('regression');
    const regressed = h.events.find((event) => event.type === 'feature-regressed');
    expect(regressed).toMatchObject({ featureId: 'F1' });
    const progress = (await h.store.read('progress.md')) ?? '';
    expect(progress).toContain('## Session 3 (written by Baton: regression check)');
    expect(progress).toMatch(/- F1 regressed: its check `sh features\/f1\.sh/);
    // Session 4 starts from an orientation naming F1 first, and fixes it.
    const fourthPrompt = JSON.stringify(
      requests.find((request) =>
        JSON.stringify(request.params.messages[0]).includes('session=\\"4\\"'),
      )?.params.messages[0],
    );
    expect(fourthPrompt).toMatch(/regressed ones first/);
    expect(fourthPrompt).toMatch(/- F1 \(features\.json line \d+\)[^\n]*\\n {2}- REGRESSED/);
    const fourth = results[3]!;
    expect(fourth.flippedFeatures).toEqual(['F1']);
    expect(fourth.checks?.F1?.status).toBe('verified');
  });
});
