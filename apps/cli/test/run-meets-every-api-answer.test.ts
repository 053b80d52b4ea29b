import { startModelSim, type SimRequestRecord } from '@baton/model-sim';
import { cliWorld } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';

/**
 * What the API can answer in the middle of a session, met by `baton run` against the strict
 * simulator (docs/sessions.md, "What the API can answer and what Baton does"): each fault once, in
 * turn, on the requests that continue the session's work (`nextWorkFaults`). The worker meets the
 * same answers in apps/worker/test/api-faults-through-the-worker.test.ts.
 */

const world = cliWorld();

interface LoggedEvent {
  type: string;
  status?: number;
  delayMs?: number;
  nudged?: boolean;
  cause?: string;
  result?: { outcome: string };
}

const FAULTS = [
  'rate_limit',
  'overloaded',
  'server_error',
  'stream_error',
  'cut_stream',
  'empty_reply',
  'pause_turn',
  'max_tokens',
  'context_window_exceeded',
] as const;

describe('baton run meets every answer the API gives mid-session', () => {
  it('retries what is retried (waiting the retry-after asked for), nudges an empty reply once, continues a paused turn, re-asks a cut reply with more room, hands a full context to the next session, and completes', async () => {
    const sim = world.closeAfter(
      await startModelSim({ faults: { nextWorkFaults: [...FAULTS], retryAfterSeconds: 2 } }),
    );
    const home = world.home;
    const env = cliEnv(home, {
      ANTHROPIC_API_KEY: 'test-key',
      ANTHROPIC_BASE_URL: sim.url,
      BATON_MODEL: 'claude-haiku-4-5',
    });
    const result = await runCli(
      ['run', '--goal', 'Greet people.\n- say hello\n- say goodbye', '--project', 'answers'],
      { cwd: world.dir, env },
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);

    const records = sim.received;
    // Every fault was met, once, and no request Baton built was refused.
    expect(records.filter((record) => record.status === 400)).toEqual([]);
    const faults = records.flatMap((record) => (record.fault === undefined ? [] : [record.fault]));
    expect(faults).toEqual([
      'rate-limit',
      'overloaded',
      'server-error',
      'stream-error',
      'cut-stream',
      'empty-reply',
      'pause-turn',
      'max-tokens',
      'context-window-exceeded',
    ]);
    // 429 and 529: the next request came after the retry-after the API asked for.
    const next = (record: SimRequestRecord) =>
      records.find((candidate) => candidate.number === record.number + 1)!;
    for (const record of records.filter((entry) => entry.status === 429 || entry.status === 529)) {
      expect(next(record).at - record.at).toBeGreaterThanOrEqual(2_000);
    }

    // max_tokens: a reply cut inside a tool call is sent again with twice the room (never run).
    const cut = records.find((record) => record.fault === 'max-tokens')!;
    if ((cut.toolCalls?.length ?? 0) > 0) expect(next(cut).maxTokens).toBe(2 * cut.maxTokens!);

    const logs = await runCli(['logs', 'answers', '--local', '--json'], {
      cwd: world.dir,
      env: cliEnv(home),
    });
    const events = logs.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as LoggedEvent);
    const retries = events.filter((event) => event.type === 'api-retry');
    // The stream error and the cut stream came after a 200: no status of their own.
    expect(retries.map((event) => event.status ?? null)).toEqual([429, 529, 500, null, null]);
    expect(retries.slice(0, 2).map((event) => event.delayMs)).toEqual([2_000, 2_000]);
    expect(events.filter((event) => event.type === 'empty-reply')).toEqual([
      expect.objectContaining({ nudged: true }),
    ]);
    expect(events.filter((event) => event.type === 'context-full')).toEqual([
      expect.objectContaining({ cause: 'stop_reason' }),
    ]);
    const ends = events.filter((event) => event.type === 'session-end');
    expect(ends.length).toBeGreaterThan(1);
    expect(ends.every((end) => end.result !== undefined && end.result.outcome !== 'failed')).toBe(
      true,
    );
  }, 300_000);
});
