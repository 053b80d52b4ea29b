import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startModelSim, type ModelSim, type SimScriptRequest } from '@baton/model-sim';
import type { StoredGuidance } from '@baton/projects';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

/**
 * `baton say` while a session is in the middle of a tool-using turn, from both entry points (a
 * `baton worker` session, and a `baton run` with `say --local`): the session ran the model's tool
 * calls and its request with their results is with the model (held by the strict simulator,
 * `stallNextWork`). The guidance must reach the model in the next user turn, after that turn's
 * `tool_result` blocks (the API refuses a turn that does not begin with them), and be
 * acknowledged once the model answered it.
 */

const GOAL = 'Greet people.\n- say hello\n- say goodbye';
const TEXT = 'Name the greeting file hello.txt.';

const world = redisCliWorld();

interface Block {
  type: string;
  id?: string;
  tool_use_id?: string;
  text?: string;
}

function blocksOf(message: { content?: unknown } | undefined): Block[] {
  const content = message?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return (content ?? []) as Block[];
}

/**
 * From the simulator's requests: the guidance went with the request right after the held one,
 * and only that one, as a text block after one `tool_result` per `tool_use` of the reply before
 * (in order); and the simulator refused nothing.
 */
function expectGuidanceAfterToolResults(
  sim: ModelSim,
  seen: readonly SimScriptRequest[],
  held: number,
  guidanceId: string,
): void {
  expect(sim.received.filter((record) => record.status >= 400)).toEqual([]);
  // The held request was in a tool turn: it answered the previous reply's tool calls.
  const heldRequest = seen.find((request) => request.number === held);
  const heldCalls = blocksOf(heldRequest?.params.messages.at(-2)).filter(
    (block) => block.type === 'tool_use',
  );
  expect(heldCalls.length).toBeGreaterThan(0);

  const marker = `<operator_guidance id="${guidanceId}"`;
  const carrying = seen.filter((request) =>
    blocksOf(request.params.messages.at(-1)).some((block) => block.text?.includes(marker)),
  );
  expect(carrying.map((request) => request.number)).toEqual([held + 1]);
  const request = carrying[0]!;
  const calls = blocksOf(request.params.messages.at(-2)).filter(
    (block) => block.type === 'tool_use',
  );
  expect(calls.length).toBeGreaterThan(0);
  const turn = request.params.messages.at(-1);
  expect(turn?.role).toBe('user');
  const blocks = blocksOf(turn);
  expect(blocks.slice(0, calls.length).map((block) => [block.type, block.tool_use_id])).toEqual(
    calls.map((call) => ['tool_result', call.id]),
  );
  const rest = blocks.slice(calls.length);
  expect(rest.some((block) => block.type === 'tool_result')).toBe(false);
  const guidance = rest.find((block) => block.text?.includes(marker));
  expect(guidance).toMatchObject({ type: 'text', text: expect.stringContaining(TEXT) });
}

describe('baton say in the middle of a tool turn, against a baton worker', () => {
  it('the guidance follows the turn’s tool_result blocks in the next request, the API refuses nothing, and the session acknowledges it', async () => {
    const { redis } = world;
    const seen: SimScriptRequest[] = [];
    const sim = world.closeAfter(
      await startModelSim({ script: (request) => void seen.push(request) }),
    );
    const worker = world.start(['worker', '--port', '0'], {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_CHAIN_DELAY_MS: '0',
    });
    await worker.waitForOutput('"worker started"', 60_000);
    const id = redis.projectId('saytool');
    await redis.control.createProject({ id, goal: GOAL });
    // Hold the first request that continues the session's work: its tools have run and their
    // results are with the model.
    sim.setFaults({ stallNextWork: 1 });
    await redis.control.enqueue(id);
    await sim.waitForStalled(1, 90_000);
    const held = sim.requests;

    const said = await world.cli(['say', id, TEXT, '--json']);
    expect(said.stderr).toBe('');
    expect(said.code).toBe(0);
    const sent = JSON.parse(said.stdout) as { id: string; sessionRunning: boolean };
    expect(sent.sessionRunning).toBe(true);
    sim.releaseStalls();

    const done = await waitFor(
      'the project to settle',
      async () => {
        const project = await redis.control.getProject(id);
        return project !== null && !['queued', 'running'].includes(project.status) && project;
      },
      120_000,
    );
    expect(done.status).toBe('completed');
    expectGuidanceAfterToolResults(sim, seen, held, sent.id);

    // Acknowledged: the event names the turn that carried it, and the stored guidance says who.
    const events = (await redis.control.readEvents(id, { count: 100_000 })).map(
      (entry) => entry.event,
    );
    const sentEvent = events.find((event) => event.type === 'guidance-sent');
    const delivered = events.filter((event) => event.type === 'guidance-delivered');
    expect(delivered).toEqual([
      expect.objectContaining({ guidanceIds: [sent.id], inFirstMessage: false }),
    ]);
    const deliveredEvent = delivered[0] as { sessionId: string; turn: number };
    expect(sentEvent).toMatchObject({
      guidanceId: sent.id,
      runningSessionId: deliveredEvent.sessionId,
    });
    const stored: StoredGuidance[] = await redis.control.listGuidance(id);
    expect(stored).toEqual([
      expect.objectContaining({
        id: sent.id,
        acknowledged: expect.objectContaining({
          sessionId: deliveredEvent.sessionId,
          turn: deliveredEvent.turn,
        }),
      }),
    ]);
    const logs = await world.cli(['logs', id]);
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain(
      `✉ guidance delivered to the model with turn ${deliveredEvent.turn}\n`,
    );
  }, 300_000);
});

describe('baton say --local in the middle of a tool turn, against a baton run', () => {
  it('the guidance follows the turn’s tool_result blocks in the next request, the API refuses nothing, and the session acknowledges it', async () => {
    const seen: SimScriptRequest[] = [];
    const sim = world.closeAfter(
      await startModelSim({ script: (request) => void seen.push(request) }),
    );
    const { home } = world;
    const id = 'saylocal';
    // Hold the first request that continues the session's work, as above.
    sim.setFaults({ stallNextWork: 1 });
    const run = world.start(['run', '--goal', GOAL, '--project', id], {
      BATON_HOME: home,
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_MODEL: 'claude-haiku-4-5',
    });
    await sim.waitForStalled(1, 120_000);
    const held = sim.requests;

    const said = await runCli(['say', id, TEXT, '--local', '--json'], {
      cwd: world.dir,
      env: cliEnv(home),
    });
    expect(said.stderr).toBe('');
    expect(said.code).toBe(0);
    const sent = JSON.parse(said.stdout) as { id: string; sessionRunning: boolean };
    expect(sent).toMatchObject({ projectId: id, text: TEXT, sessionRunning: true });
    sim.releaseStalls();

    const finished = await run.done;
    expect(finished.stderr).toBe('');
    expect(finished.code).toBe(0);
    expectGuidanceAfterToolResults(sim, seen, held, sent.id);

    // Acknowledged: the run's event log names the turn, and the project's acknowledgement file
    // says which session answered it at that turn.
    const projectDir = path.join(home, 'projects', id);
    const events = (await readFile(path.join(projectDir, 'events.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; sessionId?: string; turn?: number });
    const delivered = events.filter((event) => event.type === 'guidance-delivered');
    expect(delivered).toEqual([
      expect.objectContaining({ guidanceIds: [sent.id], inFirstMessage: false }),
    ]);
    const acks = (await readFile(path.join(projectDir, 'guidance-acks.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    expect(acks).toEqual([
      expect.objectContaining({
        id: sent.id,
        sessionId: delivered[0]?.sessionId,
        turn: delivered[0]?.turn,
      }),
    ]);
    const logs = await runCli(['logs', id, '--local'], { cwd: world.dir, env: cliEnv(home) });
    expect(logs.code).toBe(0);
    expect(logs.stdout).toContain(
      `✉ guidance delivered to the model with turn ${delivered[0]?.turn}\n`,
    );
    // A finished project takes no more guidance.
    const late = await runCli(['say', id, TEXT, '--local'], { cwd: world.dir, env: cliEnv(home) });
    expect(late.code).toBe(2);
    expect(late.stderr).toMatch(/^baton: project saylocal is completed; guidance reaches only/u);
  }, 300_000);
});
