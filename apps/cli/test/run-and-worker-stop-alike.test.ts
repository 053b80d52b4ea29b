import path from 'node:path';
import { createFileProjectLog, type ProjectRecord } from '@baton/projects';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { EXAMPLE_GOAL, runCli, startCli, type CliProcess } from './helpers.js';
import { useRedisWorld, type RedisWorld } from './redis-fixtures.js';

// `baton run` and a worker run one session chain: the same scenario through both must end in
// the same status, for the same reason, after the same number of sessions. Each scenario runs
// once through `baton run` (files under BATON_HOME) and once through `baton enqueue` + `baton
// worker` (Redis), both on the built-in simulator.

let dir: string;
let world: RedisWorld;
const running: CliProcess[] = [];
useRedisWorld((fixture) => ({ dir, world } = fixture), { running });

interface Scenario {
  name: string;
  /** Flags both `baton run` and `baton enqueue` take. */
  flags: string[];
  /** `baton run`'s exit code for where the chain stopped. */
  exitCode: number;
  status: ProjectRecord['status'];
  reason: RegExp;
}

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
];

async function throughBatonRun(scenario: Scenario, id: string): Promise<ProjectRecord> {
  const home = path.join(dir, 'run-home');
  // The simulator at Sonnet's prices (`sim` costs nothing), so the cost budget can run out.
  const result = await runCli(
    ['run', '--project', id, '--model', 'sim-sonnet', ...scenario.flags],
    {
      cwd: dir,
      env: world.env(home),
    },
  );
  expect(result.code, result.stderr).toBe(scenario.exitCode);
  return createFileProjectLog({ home }).require(id);
}

async function throughWorker(scenario: Scenario, id: string): Promise<ProjectRecord> {
  const env = world.env(path.join(dir, 'worker-home'), {
    BATON_MODEL: 'sim-sonnet',
    BATON_CHAIN_DELAY_MS: '0',
    BATON_RETRY_DELAY_MS: '0',
  });
  const worker = startCli(['worker', '--port', '0'], { cwd: dir, env });
  running.push(worker);
  await worker.waitForOutput('"worker started"');
  const enqueued = await runCli(['enqueue', '--project', id, ...scenario.flags], {
    cwd: dir,
    env: world.env(dir),
  });
  expect(enqueued.code, enqueued.stderr).toBe(0);
  await waitFor(
    `${id} stops`,
    async () => {
      const project = await world.control.getProject(id);
      return project !== null && !['queued', 'running'].includes(project.status);
    },
    60_000,
  );
  return (await world.control.getProject(id))!;
}

describe('baton run and a worker stop a chain by the same rules', () => {
  it.each(SCENARIOS)(
    '$name: same status, reason and sessions through both',
    async (scenario) => {
      const local = await throughBatonRun(scenario, world.projectId('run'));
      const remote = await throughWorker(scenario, world.projectId('wk'));
      for (const project of [local, remote]) {
        expect(project.status).toBe(scenario.status);
        expect(project.statusReason).toMatch(scenario.reason);
        expect(project.activeSession).toBeNull();
      }
      expect(local.counters.sessions).toBe(remote.counters.sessions);
      expect(local.counters.featuresPassing).toBe(remote.counters.featuresPassing);
      expect(local.counters.consecutiveFailures).toBe(remote.counters.consecutiveFailures);
    },
    240_000,
  );
});
