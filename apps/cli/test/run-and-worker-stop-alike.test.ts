import path from 'node:path';
import { startModelSim, type ModelSim, type ModelSimOptions } from '@baton/model-sim';
import { createFileProjectLog, type ProjectCounters, type ProjectRecord } from '@baton/projects';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_GOAL } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

// `baton run` and a worker run one session chain: the same scenario through both must end in
// the same status, for the same reason, after the same number of sessions. Each scenario runs
// once through `baton run` (files under BATON_HOME) and once through `baton enqueue` + `baton
// worker` (Redis), on the built-in simulator or, for a scenario with API answers of its own, on
// a fresh simulator over HTTP per path (the same request numbers for both). One scenario per
// rule of `decideAfterSession` a user can reach from both: completed, budget, no progress,
// failed (refused every time), the API not knowing the model, context hand-offs, and a feature
// whose check fails on a later session (verified progress), the project's session and turn
// limits, the project's model over BATON_MODEL (also when `baton run` continues the project),
// and an operator pause (`baton pause`, with --local for `baton run`'s project, from another
// process). A cancel from another process through both is in cancel-local; Ctrl-C reaches only
// `baton run` (second-ctrl-c).

const world = redisCliWorld();

interface Scenario {
  name: string;
  /** Flags both `baton run` and `baton enqueue` take. */
  flags: string[];
  /** `baton run`'s exit code for where the chain stopped. */
  exitCode: number;
  status: ProjectRecord['status'];
  reason: RegExp;
  /** Default `sim-sonnet`: the built-in simulator at Sonnet's prices. */
  model?: string;
  /** A simulator over HTTP with these options instead of the built-in one. */
  sim?: ModelSimOptions;
  /** Counters that must also agree (besides sessions, features passing and failures). */
  counters?: (keyof ProjectCounters)[];
  /** Each path at least this many sessions. */
  minSessions?: number;
  /** Every session of both paths stopped at its turn limit (`--max-turns`). */
  turnLimited?: true;
  /**
   * `baton run` runs one session with the flags, then continues the project without them (`run
   * --project ID`): what the flags set must be the project's, not the first process's.
   */
  continued?: true;
  /** Every session of both paths ran on this model. */
  sessionModel?: string;
}

const CHECKLIST_GOAL = (features: number, marker = '') =>
  [
    'A calculator.' + marker,
    ...Array.from({ length: features }, (_, i) => `- operation ${i + 1}`),
  ].join('\n');

/** Request numbers 1..n: a fault on every request of the scenario. */
const everyRequest = (n = 200) => Array.from({ length: n }, (_, index) => index + 1);

const SCENARIOS: Scenario[] = [
  {
    name: 'every feature passes',
    flags: ['--goal-file', EXAMPLE_GOAL],
    exitCode: 0,
    status: 'completed',
    reason: /^all 4 features pass$/,
  },
  {
    name: 'the project budget is used up',
    flags: ['--goal-file', EXAMPLE_GOAL, '--budget-usd', '0.01'],
    exitCode: 4,
    status: 'paused',
    reason: /^budget: \$0\.\d+ spent of \$0\.01$/,
  },
  {
    name: 'the project session limit is reached',
    flags: ['--goal-file', EXAMPLE_GOAL, '--max-sessions', '2'],
    exitCode: 4,
    status: 'paused',
    reason: /^budget: 2 of 2 sessions used$/,
  },
  {
    name: 'each session is held to the project turn limit',
    flags: ['--goal-file', EXAMPLE_GOAL, '--max-turns', '2', '--max-sessions', '3'],
    exitCode: 4,
    status: 'paused',
    reason: /^budget: 3 of 3 sessions used$/,
    turnLimited: true,
  },
  {
    name: 'no session flips a feature',
    // Every flip's check fails, so no feature ever passes.
    flags: [
      '--goal',
      'Two things\n- first [sim:no-check]\n- second [sim:no-check]',
      '--check',
      'false',
      '--stall-after',
      '2',
    ],
    exitCode: 10,
    status: 'paused',
    reason: /^no_progress: 2 sessions in a row without a newly passing feature \(0 of 2 pass\)/,
    counters: ['sessionsWithoutProgress'],
  },
  {
    name: 'the model refuses every session',
    flags: ['--goal', 'One thing\n- first'],
    model: 'claude-sonnet-4-6',
    sim: { faults: { refusalOn: everyRequest() } },
    exitCode: 5,
    status: 'failed',
    reason: /^3 failed sessions in a row; last error: /,
  },
  {
    name: 'the API does not know the model',
    flags: ['--goal', 'One thing\n- first'],
    model: 'claude-gone-1',
    sim: { faults: { unknownModels: ['claude-gone-1'] } },
    exitCode: 6,
    status: 'paused',
    reason: /^model_not_found: /,
  },
  {
    name: 'sessions hand off on a full context window',
    flags: ['--goal', CHECKLIST_GOAL(12, ' [sim:keep-going]'), '--stall-after', '10'],
    model: 'sim-small-context',
    sim: { contextWindow: { 'sim-small-context': 10_000 } },
    exitCode: 0,
    status: 'completed',
    reason: /^all 12 features pass$/,
    minSessions: 3,
  },
  {
    name: 'a later session breaks a verified feature: its check catches it',
    flags: [
      '--goal',
      'Todo app.\n- Add a todo [sim:no-check]\n- List todos [sim:claim-first]\n- Mark done [sim:breaks F2]',
    ],
    exitCode: 0,
    status: 'completed',
    reason: /^all 3 features pass$/,
    counters: ['featuresVerified', 'featuresClaimed', 'featuresRegressed'],
  },
  {
    name: "the project's model is the one both run, over BATON_MODEL",
    // BATON_MODEL (the scenario's model) is one the API does not know: a session on it pauses.
    flags: ['--goal', 'Two things\n- first\n- second', '--model', 'claude-haiku-4-5'],
    model: 'claude-gone-1',
    sim: { faults: { unknownModels: ['claude-gone-1'] } },
    exitCode: 0,
    status: 'completed',
    reason: /^all 2 features pass$/,
    continued: true,
    sessionModel: 'claude-haiku-4-5',
  },
];

/** The environment of one path's model: the built-in simulator, or a fresh one over HTTP. */
async function modelEnv(scenario: Scenario): Promise<{
  env: Record<string, string>;
  close: () => Promise<void>;
}> {
  const model = scenario.model ?? 'sim-sonnet';
  if (scenario.sim === undefined) return { env: { BATON_MODEL: model }, close: async () => {} };
  const sim = await startModelSim(scenario.sim);
  return {
    env: { BATON_MODEL: model, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: sim.url },
    close: () => sim.close(),
  };
}

async function throughBatonRun(scenario: Scenario, id: string): Promise<ProjectRecord> {
  const home = path.join(world.dir, 'run-home');
  const model = await modelEnv(scenario);
  try {
    // `sim-sonnet` by default: the simulator at Sonnet's prices (`sim` costs nothing), so the
    // cost budget can run out.
    const run = (args: string[]) =>
      world.cli(['run', '--project', id, ...args], { BATON_HOME: home, ...model.env });
    if (scenario.continued === true) {
      const first = await run(['--sessions', '1', ...scenario.flags]);
      expect(first.code, first.stderr).toBe(3);
    }
    const result = await run(['--sessions', '30', ...(scenario.continued ? [] : scenario.flags)]);
    expect(result.code, result.stderr).toBe(scenario.exitCode);
  } finally {
    await model.close();
  }
  return createFileProjectLog({ home }).require(id);
}

async function throughWorker(scenario: Scenario, id: string): Promise<ProjectRecord> {
  const model = await modelEnv(scenario);
  try {
    return await runOnWorker(scenario, id, model.env);
  } finally {
    await model.close();
  }
}

async function runOnWorker(
  scenario: Scenario,
  id: string,
  modelEnv: Record<string, string>,
): Promise<ProjectRecord> {
  const worker = world.startWorker('worker-home', {
    ...modelEnv,
    BATON_CHAIN_DELAY_MS: '0',
    BATON_RETRY_DELAY_MS: '0',
  });
  await worker.waitForOutput('"worker started"', 60_000);
  const enqueued = await world.cli(['enqueue', '--project', id, ...scenario.flags]);
  expect(enqueued.code, enqueued.stderr).toBe(0);
  await waitFor(
    `${id} stops`,
    async () => {
      const project = await world.redis.control.getProject(id);
      return project !== null && !['queued', 'running'].includes(project.status);
    },
    120_000,
  );
  return (await world.redis.control.getProject(id))!;
}

describe('baton run and a worker stop a chain by the same rules', () => {
  it.each(SCENARIOS)(
    '$name: same status, reason and sessions through both',
    async (scenario) => {
      const local = await throughBatonRun(scenario, world.redis.projectId('run'));
      const remote = await throughWorker(scenario, world.redis.projectId('wk'));
      for (const project of [local, remote]) {
        expect(project.status).toBe(scenario.status);
        expect(project.statusReason).toMatch(scenario.reason);
        expect(project.activeSession).toBeNull();
      }
      expect(local.counters.sessions).toBe(remote.counters.sessions);
      expect(local.counters.featuresPassing).toBe(remote.counters.featuresPassing);
      expect(local.counters.consecutiveFailures).toBe(remote.counters.consecutiveFailures);
      for (const counter of scenario.counters ?? []) {
        expect(local.counters[counter], counter).toBe(remote.counters[counter]);
      }
      expect(local.counters.sessions).toBeGreaterThanOrEqual(scenario.minSessions ?? 1);
      if (scenario.sessionModel !== undefined) {
        const sessions = [
          ...(await createFileProjectLog({ home: path.join(world.dir, 'run-home') }).listSessions(
            local.id,
          )),
          ...(await world.redis.control.listSessions(remote.id)),
        ];
        expect(sessions.map((session) => session.model)).toEqual(
          sessions.map(() => scenario.sessionModel),
        );
      }
      if (scenario.turnLimited === true) {
        const sessions = [
          ...(await createFileProjectLog({ home: path.join(world.dir, 'run-home') }).listSessions(
            local.id,
          )),
          ...(await world.redis.control.listSessions(remote.id)),
        ];
        expect(sessions).toHaveLength(local.counters.sessions * 2);
        for (const session of sessions) {
          // Held to the limit (its end-of-session turns come on top), on both paths.
          expect(session).toMatchObject({
            outcome: 'budget_exhausted',
            reason: 'Stopped at the turn budget.',
          });
        }
      }
    },
    300_000,
  );
});

/** A simulator that holds the first request continuing a session's work, and its environment. */
async function heldSession(): Promise<{ sim: ModelSim; env: Record<string, string> }> {
  const sim = world.closeAfter(await startModelSim({ faults: { stallNextWork: 1 } }));
  return {
    sim,
    env: {
      BATON_MODEL: 'claude-sonnet-4-6',
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_CHAIN_DELAY_MS: '0',
    },
  };
}

describe('an operator pause stops baton run and a worker alike', () => {
  it('baton pause (--local for baton run) from another process: the held session ends paused, no next one starts', async () => {
    const { redis } = world;
    // `baton run` in one process, `baton pause --local` in another, while session 1 is held.
    const home = path.join(world.dir, 'run-home');
    const localId = redis.projectId('prun');
    const local = await heldSession();
    const run = world.start(['run', '--goal-file', EXAMPLE_GOAL, '--project', localId], {
      BATON_HOME: home,
      ...local.env,
    });
    await local.sim.waitForStalled(1, 90_000);
    const paused = await world.cli(['pause', localId, '--local'], { BATON_HOME: home });
    expect(paused.stderr).toBe('');
    expect(paused.code).toBe(0);
    expect(paused.stdout).toBe(
      `pausing project ${localId}: its running session writes its notes and stops; continue it with: baton run --project ${localId}\n`,
    );
    // Nothing is released: only the pause can end the held session.
    const ended = await run.done;
    expect(ended.code, ended.stderr).toBe(3);
    expect(ended.stdout).toContain('Paused: paused by operator.');
    const log = createFileProjectLog({ home });
    const localProject = await log.require(localId);
    const localSessions = await log.listSessions(localId);

    // The same through a worker and `baton pause`.
    const remote = await heldSession();
    const worker = world.startWorker('worker-home', remote.env);
    await worker.waitForOutput('"worker started"', 60_000);
    const remoteId = redis.projectId('pwk');
    const enqueued = await world.cli([
      'enqueue',
      '--project',
      remoteId,
      '--goal-file',
      EXAMPLE_GOAL,
    ]);
    expect(enqueued.code, enqueued.stderr).toBe(0);
    await remote.sim.waitForStalled(1, 90_000);
    const pausedRemote = await world.cli(['pause', remoteId]);
    expect(pausedRemote.code, pausedRemote.stderr).toBe(0);
    const remoteProject = await waitFor(
      `${remoteId} records its paused session`,
      async () => {
        const project = await redis.control.getProject(remoteId);
        return project !== null && project.activeSession === null && project.counters.sessions > 0
          ? project
          : false;
      },
      120_000,
    );
    const remoteSessions = await redis.control.listSessions(remoteId);

    for (const [project, sessions] of [
      [localProject, localSessions],
      [remoteProject, remoteSessions],
    ] as const) {
      expect(project.status).toBe('paused');
      expect(project.statusReason).toBe('paused by operator');
      expect(project.activeSession).toBeNull();
      expect(project.counters.sessions).toBe(1);
      expect(sessions.map((session) => session.outcome)).toEqual(['paused']);
    }
    expect(
      (await log.readEvents(localId, { count: 100_000 })).some(
        (entry) => entry.event.type === 'project-paused',
      ),
    ).toBe(true);
  }, 300_000);
});
