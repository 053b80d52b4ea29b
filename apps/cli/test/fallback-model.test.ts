import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { estimateCostUsd } from '@baton/context-config';
import { waitFor } from '@baton/test-support';
import { startModelSim, type ModelSim } from '@baton/model-sim';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const PRIMARY = 'claude-opus-4-1';
const FALLBACK = 'claude-haiku-4-5';
const GOAL = 'Greet\n- hello';

const world = redisCliWorld();

/** A simulator on which `PRIMARY` stays overloaded, and the CLI's API variables pointing at it. */
async function overloadedPrimary(): Promise<{ sim: ModelSim; api: Record<string, string> }> {
  const sim = world.closeAfter(await startModelSim({ faults: { overloadedModels: [PRIMARY] } }));
  return { sim, api: { ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: sim.url } };
}

interface LoggedEvent {
  type: string;
  model?: string;
  from?: string;
  to?: string;
  costUsd?: number;
  usage?: {
    inputTokens: number;
    outputTokens: number;
    cacheReadInputTokens: number;
    cacheCreationInputTokens: number;
  };
  result?: { outcome: string; fallback?: { from: string; to: string }; usage: { costUsd: number } };
}

async function localEvents(project: string): Promise<LoggedEvent[]> {
  const text = await readFile(path.join(world.home, 'projects', project, 'events.jsonl'), 'utf8');
  return text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as LoggedEvent);
}

/** What a turn costs at `model`'s list prices. */
function priced(model: string, event: LoggedEvent): number {
  const usage = event.usage;
  if (usage === undefined) return 0;
  return estimateCostUsd(model, {
    input_tokens: usage.inputTokens,
    output_tokens: usage.outputTokens,
    cache_read_input_tokens: usage.cacheReadInputTokens,
    cache_creation_input_tokens: usage.cacheCreationInputTokens,
  });
}

describe('BATON_FALLBACK_MODEL with baton run', () => {
  it('finishes on the fallback model when the model stays overloaded, priced at the fallback prices', async () => {
    const { sim, api } = await overloadedPrimary();
    const result = await runCli(['run', '--goal', GOAL, '--project', 'fb'], {
      cwd: world.dir,
      env: cliEnv(world.home, {
        ...api,
        BATON_MODEL: PRIMARY,
        BATON_FALLBACK_MODEL: FALLBACK,
      }),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `Fallback model: ${FALLBACK} (when ${PRIMARY} stays overloaded).`,
    );
    expect(result.stdout).toContain(
      `${PRIMARY} stays overloaded: the session continues on ${FALLBACK} from turn 1`,
    );
    expect(result.stdout).toContain(`fell back to ${FALLBACK}`);
    const events = await localEvents('fb');
    const ends = events.filter((event) => event.type === 'session-end');
    expect(ends.length).toBeGreaterThan(0);
    for (const end of ends) {
      expect(end.result).toMatchObject({ fallback: { from: PRIMARY, to: FALLBACK } });
    }
    expect(events.filter((event) => event.type === 'model-fallback')).toHaveLength(ends.length);
    const turns = events.filter((event) => event.type === 'turn');
    expect(turns.every((turn) => turn.model === FALLBACK)).toBe(true);
    for (const turn of turns) expect(turn.costUsd).toBeCloseTo(priced(FALLBACK, turn), 12);
    const total = ends.reduce((sum, end) => sum + (end.result?.usage.costUsd ?? 0), 0);
    expect(total).toBeCloseTo(
      turns.reduce((sum, turn) => sum + priced(FALLBACK, turn), 0),
      10,
    );
    // The same tokens at the overloaded model's prices would have cost more.
    expect(turns.reduce((sum, turn) => sum + priced(PRIMARY, turn), 0)).toBeGreaterThan(total);
    // Every request to the primary model was refused; every answered one went to the fallback.
    const answered = sim.received.filter((record) => record.status === 200);
    expect(answered.every((record) => record.model === FALLBACK)).toBe(true);
    expect(sim.received.some((record) => record.model === PRIMARY)).toBe(true);
    // The transcript says it too: the model of every answer, and the fallback at the end.
    const transcript = await runCli(['transcript', 'fb', '--local', '--session', '1'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    expect(transcript.code).toBe(0);
    expect(transcript.stdout).toContain(
      `fell back from ${PRIMARY} to ${FALLBACK} at turn 1 (the model stayed overloaded)`,
    );
    const json = await runCli(['transcript', 'fb', '--local', '--session', '1', '--json'], {
      cwd: world.dir,
      env: cliEnv(world.home),
    });
    const [session] = json.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { messages: Array<{ role: string; model?: string }> });
    const models = session!.messages.filter((m) => m.role === 'assistant').map((m) => m.model);
    expect(models.length).toBeGreaterThan(0);
    expect(new Set(models)).toEqual(new Set([FALLBACK]));
  });

  it('without a fallback model the overloaded model fails the session as before (exit 6)', async () => {
    const { sim, api } = await overloadedPrimary();
    const result = await runCli(['run', '--goal', GOAL, '--project', 'nofb'], {
      cwd: world.dir,
      env: cliEnv(world.home, { ...api, BATON_MODEL: PRIMARY }),
    });
    expect(result.code).toBe(6);
    expect(result.stdout).not.toContain('Fallback model');
    expect(result.stdout).toContain('✗ failed');
    const events = await localEvents('nofb');
    expect(events.some((event) => event.type === 'model-fallback')).toBe(false);
    expect(sim.received.every((record) => record.model === PRIMARY)).toBe(true);
  });

  it('refuses a bad BATON_FALLBACK_MODEL, or one that is the model itself, in one line (exit 2)', async () => {
    const home = world.home;
    const bad = await runCli(['run', '--goal', GOAL, '--project', 'bad'], {
      cwd: world.dir,
      env: cliEnv(home, { BATON_FALLBACK_MODEL: 'claude haiku' }),
    });
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toMatch(/BATON_FALLBACK_MODEL must be a model id .*"claude haiku"/);
    const same = await runCli(['run', '--goal', GOAL, '--project', 'same'], {
      cwd: world.dir,
      env: cliEnv(home, { BATON_MODEL: 'sim', BATON_FALLBACK_MODEL: 'sim' }),
    });
    expect(same.code).toBe(2);
    expect(oneLine(same.stderr)).toContain('BATON_FALLBACK_MODEL is the model itself (sim)');
  });
});

describe('a project fallback model with baton worker', () => {
  it('enqueue --fallback-model: the worker session continues on it, and baton status says so', async () => {
    const { redis } = world;
    const { api } = await overloadedPrimary();
    const worker = world.start(['worker', '--port', '0'], {
      ...api,
      BATON_MODEL: PRIMARY,
      BATON_CHAIN_DELAY_MS: '0',
      BATON_API_RETRY_BASE_MS: '1',
    });
    await worker.waitForOutput('"worker started"');
    const metricsPort = Number(/"httpPort":(\d+)/.exec(worker.stdout())?.[1]);
    expect(metricsPort).toBeGreaterThan(0);
    const id = redis.projectId('fbw');
    const fallback = ['--fallback-model', FALLBACK, '--json'];
    const enqueued = await world.cli(['enqueue', '--project', id, '--goal', GOAL, ...fallback]);
    expect(enqueued.stderr).toBe('');
    expect(enqueued.code).toBe(0);
    expect(JSON.parse(enqueued.stdout)).toMatchObject({ fallbackModel: FALLBACK });
    const settled = await waitFor(
      'the project to settle',
      async () => {
        const project = await redis.control.getProject(id);
        return project !== null && !['queued', 'running'].includes(project.status) && project;
      },
      60_000,
    );
    expect(settled).toMatchObject({ status: 'completed' });

    const status = await world.cli(['status', id, '--json']);
    const json = JSON.parse(status.stdout) as {
      fallbackModel: string;
      sessionCommits: Array<{ model: string; fallback: { from: string; to: string } | null }>;
    };
    expect(json.fallbackModel).toBe(FALLBACK);
    expect(json.sessionCommits.length).toBeGreaterThan(0);
    for (const session of json.sessionCommits) {
      expect(session).toMatchObject({ model: PRIMARY, fallback: { from: PRIMARY, to: FALLBACK } });
    }
    // One fallback per session, counted for Prometheus.
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain(
      `baton_model_fallbacks_total{from="${PRIMARY}",to="${FALLBACK}"} ${json.sessionCommits.length}`,
    );
    const text = await world.cli(['status', id]);
    expect(text.stdout).toContain(`fallback ${FALLBACK}`);
    expect(text.stdout).toContain(
      `session 1: ${PRIMARY} stayed overloaded, ${FALLBACK} from turn 1`,
    );
    const sessions = await redis.control.listSessions(id);
    const project = await redis.control.getProject(id);
    expect(project?.counters.costUsd).toBeCloseTo(
      sessions.reduce((sum, session) => sum + session.costUsd, 0),
      10,
    );
  });

  it('refuses a bad --fallback-model and a bad BATON_FALLBACK_MODEL in one line each (exit 2)', async () => {
    const id = world.redis.projectId('bad');
    const enqueue = await world.cli([
      'enqueue',
      '--project',
      id,
      '--goal',
      GOAL,
      '--fallback-model',
      'a b',
    ]);
    expect(enqueue.code).toBe(2);
    expect(oneLine(enqueue.stderr)).toMatch(/--fallback-model.*must be a model id/);
    const worker = await world.cli(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      BATON_FALLBACK_MODEL: 'a b',
    });
    expect(worker.code).toBe(2);
    expect(oneLine(worker.stderr)).toContain('BATON_FALLBACK_MODEL must be a model id');
  });
});
