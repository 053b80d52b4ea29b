import { waitFor } from '@baton/test-support';
import type { Transcript } from '@baton/session';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';
import { oneLine, redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

function parseLines(stdout: string): Transcript[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Transcript);
}

describe('baton transcript and baton search on a worker-run project', () => {
  it('print every session the worker ran, guidance included and redacted, and find text in transcripts and memory', async () => {
    const { redis } = world;
    const worker = world.start(['worker', '--port', '0'], {
      BATON_MODEL: 'sim',
      BATON_CHAIN_DELAY_MS: '0',
    });
    await worker.waitForOutput('"worker started"');
    const id = redis.projectId('tr');
    await redis.control.createProject({ id, goal: 'Greet\n- hello' });
    const { guidance } = await redis.control.say(id, 'Prefer small commits. password=hunter22');
    await redis.control.enqueue(id);
    const done = await waitFor(
      'the project to complete',
      async () => {
        const project = await redis.control.getProject(id);
        return project?.status === 'completed' ? project : null;
      },
      60_000,
    );

    const json = await world.cli(['transcript', id, '--json']);
    expect(json.code).toBe(0);
    const transcripts = parseLines(json.stdout);
    expect(transcripts.map((transcript) => transcript.sessionNumber)).toEqual(
      Array.from({ length: done.counters.sessions }, (_, index) => index + 1),
    );
    const summaries = await redis.control.listSessions(id);
    for (const transcript of transcripts) {
      const summary = summaries.find((entry) => entry.sessionId === transcript.sessionId);
      expect(transcript).toMatchObject({
        projectId: id,
        kind: summary?.kind,
        end: { outcome: summary?.outcome, turns: summary?.turns },
      });
      expect(transcript.messages.filter((message) => message.role === 'assistant')).toHaveLength(
        summary?.turns ?? -1,
      );
    }
    const first = transcripts[0]?.messages[0];
    expect(first).toMatchObject({ role: 'user', turn: 1 });
    expect(first?.content[0]).toMatchObject({
      type: 'text',
      source: 'prompt',
      guidanceIds: [guidance.id],
    });
    expect(json.stdout).toContain('Prefer small commits. password=[REDACTED:assigned_secret]');
    expect(json.stdout).not.toContain('hunter22');

    const readable = await world.cli(['transcript', id, '--session', '1']);
    expect(readable.code).toBe(0);
    expect(readable.stdout.startsWith('═══ Session 1 (init) · sim · started ')).toBe(true);
    for (const part of [
      '── prompt · turn 1',
      '── assistant · turn 1 · stop tool_use',
      '  ▸ memory (',
      '── result of memory (',
      '── end · ',
    ]) {
      expect(readable.stdout).toContain(part);
    }
    expect(readable.stdout).not.toContain('═══ Session 2');

    const search = await world.cli(['search', id, 'HELLO']);
    expect(search.code).toBe(0);
    const lines = search.stdout.trimEnd().split('\n');
    expect(lines).toContainEqual(
      expect.stringMatching(/^memory \/memories\/features\.json:\d+: /u),
    );
    expect(lines).toContainEqual(
      expect.stringMatching(/^session \d+ turn 1 user prompt: .*hello/iu),
    );
    // Memory hits come first.
    expect(lines[0]).toMatch(/^memory /u);
    const searchJson = await world.cli(['search', id, 'hello', '--json', '--limit', '1']);
    expect(JSON.parse(searchJson.stdout)).toMatchObject({
      hits: [{ source: 'memory' }],
      truncated: true,
    });
    const nothing = await world.cli(['search', id, 'no-such-text-anywhere']);
    expect(nothing).toMatchObject({ code: 0, stdout: '' });
    expect(oneLine(nothing.stderr)).toContain('nothing in project');
  });

  it('refuses unknown projects (exit 7), a session without transcript (exit 7) and bad arguments (exit 2), one line each', async () => {
    const { redis } = world;
    const id = redis.projectId('trbad');
    await redis.control.createProject({ id, goal: 'Greet\n- hello' });
    const none = await world.cli(['transcript', id, '--session', '3']);
    expect(none.code).toBe(7);
    expect(oneLine(none.stderr)).toContain(
      `no transcript of session 3 of project ${id} (none kept yet)`,
    );
    const empty = await world.cli(['transcript', id]);
    expect(empty.code).toBe(0);
    expect(oneLine(empty.stderr)).toContain('has no transcripts yet');
    for (const args of [
      ['transcript', 'ghost-9'],
      ['search', 'ghost-9', 'x'],
      ['transcript', 'ghost-9', '--local'],
      ['search', 'ghost-9', 'x', '--local'],
    ]) {
      const unknown = await world.cli(args);
      expect(unknown.code, args.join(' ')).toBe(7);
      expect(oneLine(unknown.stderr)).toContain('no project ghost-9');
    }
    for (const args of [
      ['transcript', id, '--session', '0'],
      ['transcript', id, '--session', 'two'],
      ['search', id, '   '],
      ['search', id, 'x'.repeat(201)],
      ['transcript', 'Bad Id'],
    ]) {
      const bad = await world.cli(args);
      expect(bad.code, args.join(' ')).toBe(2);
      oneLine(bad.stderr);
    }
    // Thirteen `baton` processes: on a loaded 2-core machine each can take seconds to start.
  }, 180_000);
});

describe('baton transcript --local on a baton run project', () => {
  it('prints the transcripts baton run kept under BATON_HOME and searches them with the memory', async () => {
    const home = world.dir;
    const env = cliEnv(home);
    const run = await runCli(
      ['run', '--goal', 'Greet\n- hello', '--project', 'local-tr', '--sessions', '4'],
      { cwd: home, env },
    );
    expect(run.code, run.stderr).toBe(0);
    const json = await runCli(['transcript', 'local-tr', '--local', '--json'], {
      cwd: home,
      env,
    });
    expect(json.code).toBe(0);
    const transcripts = parseLines(json.stdout);
    expect(transcripts.length).toBeGreaterThanOrEqual(2);
    expect(transcripts[0]).toMatchObject({
      projectId: 'local-tr',
      sessionNumber: 1,
      kind: 'init',
    });
    expect(transcripts.every((transcript) => transcript.end !== null)).toBe(true);
    expect(transcripts[1]?.messages[0]?.content[0]).toMatchObject({ source: 'prompt' });

    const second = await runCli(['transcript', 'local-tr', '--local', '--session', '2'], {
      cwd: home,
      env,
    });
    expect(second.code).toBe(0);
    expect(second.stdout.startsWith('═══ Session 2 (resume)')).toBe(true);
    expect(second.stdout).toContain('── assistant · turn 1');

    const search = await runCli(['search', 'local-tr', 'hello', '--local'], { cwd: home, env });
    expect(search.code).toBe(0);
    expect(search.stdout).toMatch(/^memory \/memories\/features\.json:\d+: /mu);
    expect(search.stdout).toMatch(/^session 2 turn \d+ /mu);
    const missing = await runCli(['transcript', 'local-tr', '--local', '--session', '9'], {
      cwd: home,
      env,
    });
    expect(missing.code).toBe(7);
    expect(oneLine(missing.stderr)).toContain('(kept: sessions 1-');
  });
});
