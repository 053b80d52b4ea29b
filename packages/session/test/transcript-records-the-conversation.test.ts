import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  TRANSCRIPT_BLOCK_MAX_CHARACTERS,
  createFileTranscriptStore,
  runSession,
  type GuidanceSource,
  type OperatorGuidance,
  type TranscriptBlock,
  type TranscriptSink,
} from '../src/index.js';
import { createHarness, firstAnswerOnly, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

/** Guidance that arrives after the session's first request went out. */
function lateGuidance(entry: OperatorGuidance): GuidanceSource {
  let reads = 0;
  let acknowledged = false;
  return {
    pending: () => {
      reads += 1;
      return Promise.resolve(reads > 1 && !acknowledged ? [entry] : []);
    },
    acknowledge: () => {
      acknowledged = true;
      return Promise.resolve();
    },
  };
}

const blocks = (messages: { content: TranscriptBlock[] }[]) =>
  messages.flatMap((message) => message.content);

describe('a session transcript', () => {
  it('keeps the first prompt, every message with usage, tool calls and capped results, guidance, redacted', async () => {
    const npm = `npm_${'k3Y9'.repeat(9)}`;
    const h = await createHarness(
      {
        script: firstAnswerOnly({
          content: [
            { type: 'text', text: 'Looking at the workspace first.' },
            {
              type: 'tool_use',
              id: 'toolu_big',
              name: 'bash',
              // A secret in the input and the output, and an output far over the cap.
              input: { command: `echo ${npm}; seq 1 6000` },
            },
          ],
        }),
      },
      { initialised: true },
    );
    harness = h;
    const store = createFileTranscriptStore({ dir: path.join(h.dir, 'transcripts') });
    const result = await runSession(
      h.options({
        sessionNumber: 2,
        sessionId: 'session-two',
        transcript: store,
        guidance: lateGuidance({ id: 'g-late', at: Date.now(), text: 'Prefer small commits.' }),
      }),
    );
    expect(result.outcome).toBe('completed');
    const transcript = await store.read('session-two');
    expect(transcript).not.toBeNull();
    if (transcript === null) return;
    expect(transcript).toMatchObject({
      projectId: 'todo',
      sessionNumber: 2,
      kind: 'resume',
      model: 'sim',
      end: { outcome: 'completed', turns: result.turns },
    });
    const [first] = transcript.messages;
    expect(first).toMatchObject({ role: 'user', turn: 1, phase: 'work' });
    expect(first?.content[0]).toMatchObject({ type: 'text', source: 'prompt' });
    expect(JSON.stringify(first?.content[0])).toContain('todo');

    const assistant = transcript.messages.filter((message) => message.role === 'assistant');
    expect(assistant).toHaveLength(result.turns);
    expect(assistant.map((message) => message.turn)).toEqual(
      Array.from({ length: result.turns }, (_, index) => index + 1),
    );
    for (const message of assistant) {
      expect(message.usage?.outputTokens).toBeGreaterThan(0);
      expect(message.stopReason).toBeTypeOf('string');
      expect(message.appliedEdits).toBeInstanceOf(Array);
    }
    expect(assistant[0]?.content[0]).toEqual({
      type: 'text',
      text: 'Looking at the workspace first.',
      source: 'model',
    });
    const call = blocks(assistant).find(
      (block) => block.type === 'tool_use' && block.id === 'toolu_big',
    );
    expect(call).toMatchObject({
      type: 'tool_use',
      name: 'bash',
      input: { command: 'echo [REDACTED:npm_token]; seq 1 6000' },
    });

    const output = blocks(transcript.messages).find(
      (block) => block.type === 'tool_result' && block.toolUseId === 'toolu_big',
    );
    expect(output?.type).toBe('tool_result');
    if (output?.type !== 'tool_result') return;
    // seq 1 6000 prints 28,893 characters; the bash tool keeps 30,000: the transcript cuts it.
    expect(output.capped?.kept).toBe(TRANSCRIPT_BLOCK_MAX_CHARACTERS);
    expect(output.capped?.characters).toBeGreaterThan(TRANSCRIPT_BLOCK_MAX_CHARACTERS);
    expect(output.content).toMatch(/\[transcript cap: \d+ of \d+ characters not kept/u);
    expect(output.content).toContain('[REDACTED:npm_token]');
    expect(output.content.length).toBeLessThan(TRANSCRIPT_BLOCK_MAX_CHARACTERS + 200);
    // The head and the tail survive the cut.
    expect(output.content).toContain('\n1\n');
    expect(output.content.trimEnd().endsWith('6000')).toBe(true);

    const guidance = blocks(transcript.messages).find(
      (block) => block.type === 'text' && block.source === 'guidance',
    );
    expect(guidance).toMatchObject({ guidanceIds: ['g-late'] });
    expect(JSON.stringify(guidance)).toContain('Prefer small commits.');

    expect(JSON.stringify(transcript)).not.toContain(npm);
    expect(await store.list()).toEqual([
      expect.objectContaining({
        sessionId: 'session-two',
        messageCount: transcript.messages.length,
      }),
    ]);
  });

  it('is appended as each step completes, and a sink that fails costs the session nothing', async () => {
    const h = await createHarness({}, { initialised: true });
    harness = h;
    const calls: string[] = [];
    const sink: TranscriptSink = {
      start: () => {
        calls.push('start');
        return Promise.resolve();
      },
      append: (_sessionId, messages) => {
        calls.push(...messages.map((message) => `${message.role}:${message.turn}`));
        return Promise.reject(new Error('disk full'));
      },
      end: () => {
        calls.push('end');
        return Promise.resolve();
      },
    };
    const result = await runSession(h.options({ sessionNumber: 2, transcript: sink }));
    expect(result.outcome).toBe('completed');
    expect(calls[0]).toBe('start');
    expect(calls.at(-1)).toBe('end');
    // One message per call, in the order the conversation grew.
    expect(calls.slice(1, 4)).toEqual(['user:1', 'assistant:1', 'user:2']);
    expect(calls.filter((call) => call.startsWith('assistant:'))).toHaveLength(result.turns);
  });
});
