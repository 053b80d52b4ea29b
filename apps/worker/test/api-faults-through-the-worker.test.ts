import type { SimRequestRecord, SimScriptRequest } from '@baton/model-sim';
import type { BatonControl, ProjectRecord, ProjectStatus } from '@baton/projects';
import { readProgressEntries } from '@baton/session';
import { waitFor } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { randomProjectId, waitForCompleted } from './support/redis.js';
import { useProcessWorld, type ProcessWorld } from './support/process-world.js';
import { simWorkerEnv, spawnWorker } from './support/worker-process.js';

/**
 * Each fault the Messages API can answer, met by a real worker process on real Redis, the
 * simulator producing it on demand in the middle of a session's work (`nextWorkFaults`: the next
 * requests that continue a session, whatever their number). What the session and the chain do is
 * docs/sessions.md, "What the API can answer and what Baton does".
 *
 * The SDK (1.14) would retry 408/409/429/5xx by itself (2 retries by default, honouring
 * `retry-after-ms`, then `retry-after`, else 0.5 s doubling up to 8 s), and never a 401/403/404
 * (`x-should-retry: false`, or a 4xx). Sessions turn its retries off (`maxRetries: 0`) and retry
 * themselves, so every request below is one the worker chose to send and every wait is Baton's.
 */

const GOAL = 'Greet people.\n- say hello\n- say goodbye';

/** Every request the simulator saw, as the model saw it (the script answers nothing itself). */
const seen: SimScriptRequest[] = [];

async function waitForStatus(
  control: BatonControl,
  id: string,
  status: ProjectStatus,
  timeoutMs = 60_000,
): Promise<ProjectRecord> {
  return waitFor(
    `project ${id} ${status}`,
    async () => {
      const project = await control.getProject(id);
      return project?.status === status ? project : null;
    },
    timeoutMs,
  );
}

/** Starts a worker on the world's simulator and enqueues a two-feature project. */
async function startProject(
  world: ProcessWorld,
  label: string,
  env: Record<string, string> = {},
): Promise<string> {
  const worker = await spawnWorker(
    simWorkerEnv({ prefix: world.prefix, simUrl: world.sim.url }, env),
  );
  world.workers.push(worker);
  const id = randomProjectId(label);
  world.projects.push(id);
  await world.control.createProject({ id, goal: GOAL });
  await world.control.enqueue(id);
  return id;
}

async function eventsOf(control: BatonControl, id: string) {
  return (await control.readEvents(id, { count: 100_000 })).map((entry) => entry.event);
}

/** The request after `record` (the retry of a failed one), from the simulator's log. */
function next(records: readonly SimRequestRecord[], record: SimRequestRecord): SimRequestRecord {
  const found = records.find((candidate) => candidate.number === record.number + 1);
  if (found === undefined) throw new Error(`no request after #${record.number}`);
  return found;
}

describe('API faults met by a worker process', () => {
  const world = useProcessWorld('baton-api-faults-', {
    script: (request) => void seen.push(request),
  });

  it('401 and 403 pause the project with reason auth at once (no retry, no end-of-session turn); resumed with a good key it completes', async () => {
    const { control, sim } = world;
    sim.setFaults({ nextWorkFaults: ['unauthorized'] });
    const id = await startProject(world, 'auth');
    const paused = await waitForStatus(control, id, 'paused');
    expect(paused.statusReason).toMatch(
      /^auth: The API refused the API key: 401 authentication_error: invalid x-api-key\. Check ANTHROPIC_API_KEY .*resume the project\.$/u,
    );
    // One 401 and nothing after it: not retried, no end-of-session turn, no next session.
    expect(sim.received.map((record) => record.status).slice(-1)).toEqual([401]);
    expect(sim.received.filter((record) => record.status === 401)).toHaveLength(1);
    const afterAuth = sim.requests;

    sim.setFaults({ nextWorkFaults: ['forbidden'] });
    await control.resume(id);
    await waitFor('paused again', async () => {
      const project = await control.getProject(id);
      return project?.status === 'paused' && project.counters.sessions === 2 ? project : null;
    });
    const again = await control.getProject(id);
    expect(again?.statusReason).toMatch(
      /^auth: The API refused the API key: 403 permission_error: Your API key does not have permission/u,
    );
    expect(
      sim.received
        .filter((record) => record.number > afterAuth)
        .map((r) => r.status)
        .slice(-1),
    ).toEqual([403]);
    expect(sim.received.filter((record) => record.status === 403)).toHaveLength(1);

    const events = await eventsOf(control, id);
    expect(events.filter((event) => event.type === 'api-retry')).toEqual([]);
    const ends = events.filter((event) => event.type === 'session-end');
    expect(ends.map((event) => event.type === 'session-end' && event.result.stopReason)).toEqual([
      'auth',
      'auth',
    ]);

    // Nothing was lost: resumed with the key accepted, the chain completes the project.
    await control.resume(id);
    const done = await waitForCompleted(control, id, 120_000);
    expect(done.counters.featuresPassing).toBe(2);
  }, 240_000);

  it('404 for the model pauses the project with one line naming the model, without retrying', async () => {
    const { control, sim } = world;
    sim.setFaults({ unknownModels: ['claude-nope-9'] });
    const id = await startProject(world, 'nomodel', { BATON_MODEL: 'claude-nope-9' });
    const paused = await waitForStatus(control, id, 'paused');
    expect(paused.statusReason).toBe(
      'model_not_found: The API does not know the model "claude-nope-9" (404 not_found_error); name a model the API serves.',
    );
    expect(sim.received.map((record) => [record.status, record.model])).toEqual([
      [404, 'claude-nope-9'],
    ]);
    const sessions = await control.listSessions(id);
    expect(sessions.map((session) => [session.outcome, session.error])).toEqual([
      ['failed', 'unknown model "claude-nope-9"'],
    ]);
  }, 120_000);

  it('429 and 529: the session waits the retry-after the API asked for (measured in the simulator log) and the project completes', async () => {
    const { control, sim } = world;
    // 2 s: longer than the worker's own first backoff (1 s plus at most 20% jitter).
    sim.setFaults({ nextWorkFaults: ['rate_limit', 'overloaded'], retryAfterSeconds: 2 });
    const id = await startProject(world, 'limits');
    await waitForCompleted(control, id, 120_000);
    const records = sim.received;
    const limited = records.filter((record) => record.status === 429 || record.status === 529);
    expect(limited.map((record) => record.status)).toEqual([429, 529]);
    for (const record of limited) {
      // The SDK's retries are off: the next request is the session's own retry, sent after the
      // server's delay.
      expect(next(records, record).at - record.at).toBeGreaterThanOrEqual(2_000);
    }
    const retries = (await eventsOf(control, id)).filter((event) => event.type === 'api-retry');
    expect(
      retries.map((event) => event.type === 'api-retry' && [event.status, event.delayMs]),
    ).toEqual([
      [429, 2_000],
      [529, 2_000],
    ]);
    const sessions = await control.listSessions(id);
    expect(sessions.every((session) => session.outcome !== 'failed')).toBe(true);
  }, 240_000);

  it('an error event in the middle of a stream and a stream cut mid-response are retried; the project completes', async () => {
    const { control, sim } = world;
    sim.setFaults({
      nextWorkFaults: ['stream_error', 'cut_stream'],
      streamErrorType: 'overloaded_error',
    });
    const id = await startProject(world, 'stream');
    await waitForCompleted(control, id, 120_000);
    const records = sim.received;
    // Workers stream every response, so these are faults after a 200, as the API sends them.
    expect(records.every((record) => record.stream)).toBe(true);
    const broken = records.filter(
      (record) => record.fault === 'stream-error' || record.fault === 'cut-stream',
    );
    expect(broken.map((record) => [record.status, record.fault])).toEqual([
      [200, 'stream-error'],
      [200, 'cut-stream'],
    ]);
    const retries = (await eventsOf(control, id)).filter((event) => event.type === 'api-retry');
    expect(retries).toHaveLength(2);
    expect(retries[0]).toMatchObject({ message: expect.stringContaining('Overloaded') });
    const sessions = await control.listSessions(id);
    expect(sessions.every((session) => session.outcome !== 'failed')).toBe(true);
  }, 240_000);

  it('an empty reply right after tool results is answered once with a nudge after the tool results, and the session goes on', async () => {
    const { control, sim } = world;
    seen.length = 0;
    sim.setFaults({ nextWorkFaults: ['empty_reply'] });
    const id = await startProject(world, 'empty');
    await waitForCompleted(control, id, 120_000);
    const empty = sim.received.find((record) => record.fault === 'empty-reply');
    expect(empty).toMatchObject({ status: 200, stopReason: 'end_turn', outputTokens: 2 });
    const events = await eventsOf(control, id);
    const replies = events.filter((event) => event.type === 'empty-reply');
    expect(replies).toEqual([expect.objectContaining({ nudged: true })]);
    // The request after it: the empty reply was not sent back, the nudge follows the tool results.
    const nudged = seen.find((request) => request.number === (empty?.number ?? 0) + 1);
    const last = nudged?.params.messages.at(-1);
    expect(last?.role).toBe('user');
    const blocks = (last?.content ?? []) as Array<{ type: string; text?: string }>;
    expect(blocks[0]?.type).toBe('tool_result');
    expect(blocks.at(-1)).toMatchObject({
      type: 'text',
      text: expect.stringContaining('Your reply was empty'),
    });
    // The session that met it still did its work: it was not taken as the end of the session.
    const session = (await control.listSessions(id)).find(
      (summary) => summary.sessionId === replies[0]?.sessionId,
    );
    expect(session?.outcome).toBe('completed');
    expect(session?.turns).toBeGreaterThan(2);
  }, 240_000);

  it('max_tokens in the middle of a tool_use block: the cut call is never run, the same turn is sent again with twice the room, and the project completes', async () => {
    const { control, sim } = world;
    sim.setFaults({ nextWorkFaults: ['max_tokens'] });
    const id = await startProject(world, 'cut');
    await waitForCompleted(control, id, 120_000);
    const records = sim.received;
    const cut = records.find((record) => record.fault === 'max-tokens');
    expect(cut).toMatchObject({ status: 200, stopReason: 'max_tokens' });
    expect(cut?.toolCalls?.length).toBeGreaterThan(0);
    const retry = next(records, cut!);
    expect(retry.maxTokens).toBe(2 * cut!.maxTokens!);
    expect(retry.inputTokensAfter).toBe(cut!.inputTokensAfter);
    // Every tool call the worker ran came from a whole reply: the cut one was never run.
    const calls = (await eventsOf(control, id)).filter((event) => event.type === 'tool-call');
    const whole = records
      .filter((record) => record.status === 200 && record !== cut)
      .reduce((sum, record) => sum + (record.toolCalls?.length ?? 0), 0);
    expect(calls).toHaveLength(whole);
    const sessions = await control.listSessions(id);
    expect(sessions.every((session) => session.outcome !== 'failed')).toBe(true);
  }, 240_000);

  it('500, pause_turn and model_context_window_exceeded in the middle of the work: the 500 is retried, the paused turn goes back unchanged, the full context hands off to the next session, and the project completes', async () => {
    const { control, sim } = world;
    seen.length = 0;
    sim.setFaults({ nextWorkFaults: ['server_error', 'pause_turn', 'context_window_exceeded'] });
    const id = await startProject(world, 'stops');
    await waitForCompleted(control, id, 180_000);
    const records = sim.received;
    expect(sim.received.filter((record) => record.status === 400)).toEqual([]);
    const failed = records.find((record) => record.fault === 'server-error');
    expect(failed).toMatchObject({ status: 500 });
    const events = await eventsOf(control, id);
    expect(events.flatMap((event) => (event.type === 'api-retry' ? [event.status] : []))).toEqual([
      500,
    ]);

    // pause_turn: the next request sends the conversation back with the paused reply last.
    const paused = records.find((record) => record.fault === 'pause-turn');
    expect(paused).toMatchObject({ status: 200, stopReason: 'pause_turn' });
    const continued = seen.find((request) => request.number === paused!.number + 1);
    expect(continued?.params.messages.at(-1)?.role).toBe('assistant');

    // model_context_window_exceeded: the session ends as a full context, not a failure, says at
    // which turn in its progress entry, and the next session continues the work.
    const full = records.find((record) => record.fault === 'context-window-exceeded');
    expect(full).toMatchObject({ status: 200, stopReason: 'model_context_window_exceeded' });
    const fullEvents = events.filter((event) => event.type === 'context-full');
    expect(fullEvents).toEqual([expect.objectContaining({ cause: 'stop_reason' })]);
    const sessions = await control.listSessions(id);
    expect(sessions.every((session) => session.outcome !== 'failed')).toBe(true);
    const filled = sessions.find((session) => session.sessionId === fullEvents[0]?.sessionId);
    expect(filled).toMatchObject({ outcome: 'budget_exhausted' });
    const filledEnd = events.find(
      (event) => event.type === 'session-end' && event.sessionId === filled?.sessionId,
    );
    expect(filledEnd).toMatchObject({ result: { stopReason: 'context_full' } });
    expect(sessions.at(-1)?.sessionNumber).toBeGreaterThan(filled!.sessionNumber);
    const entries = await readProgressEntries(await control.memoryStore(id));
    const entry = entries.find((candidate) => candidate.session === filled!.sessionNumber);
    const turn = (fullEvents[0] as { turn: number }).turn;
    expect(entry?.text).toContain(`filled at turn ${turn}`);
  }, 300_000);

  it('refusal: the session stops at once (no end-of-session turn), counts as failed, and the next session completes the project', async () => {
    const { control, sim } = world;
    seen.length = 0;
    sim.setFaults({ nextWorkFaults: ['refusal'] });
    const id = await startProject(world, 'refusal', { BATON_RETRY_DELAY_MS: '0' });
    await waitForCompleted(control, id, 180_000);
    const refused = sim.received.find((record) => record.fault === 'refusal');
    expect(refused).toMatchObject({ status: 200, stopReason: 'refusal' });
    // The request after the refusal opens the next session: no end-of-session turn was sent.
    const after = seen.find((request) => request.number === refused!.number + 1);
    expect(after?.params.messages).toHaveLength(1);
    expect(JSON.stringify(after?.params.messages)).not.toContain('<baton_end_of_session');
    const sessions = await control.listSessions(id);
    expect(sessions[0]?.outcome).toBe('refused');
    const ends = (await eventsOf(control, id)).filter((event) => event.type === 'session-end');
    expect(ends[0]).toMatchObject({
      sessionId: sessions[0]?.sessionId,
      result: { outcome: 'refused', stopReason: 'refusal' },
    });
    expect(sessions.at(-1)?.outcome).toBe('completed');
  }, 300_000);
});
