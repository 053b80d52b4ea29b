import Anthropic, { BadRequestError, NotFoundError } from '@anthropic-ai/sdk';
import { betaMemoryTool } from '@anthropic-ai/sdk/helpers/beta/memory';
import type { MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { startModelSim } from '../src/index.js';
import type { ModelSim, ModelSimOptions } from '../src/index.js';
import { createMemoryStandIn } from './support/memory-stand-in.js';
import type { MemoryStandIn } from './support/memory-stand-in.js';
import { sessionPrompt } from './support/drive-session.js';

const sims: ModelSim[] = [];

afterEach(async () => {
  await Promise.all(sims.splice(0).map((sim) => sim.close()));
});

async function setup(options: ModelSimOptions = {}) {
  const sim = await startModelSim(options);
  sims.push(sim);
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 }) };
}

/** SDK memory handlers over the stand-in: a thrown error becomes an is_error tool result. */
function handlers(memory: MemoryStandIn): MemoryToolHandlers {
  const run = (input: unknown) => {
    const outcome = memory.execute(input);
    if (outcome.isError) throw new Error(outcome.content);
    return outcome.content;
  };
  return { view: run, create: run, str_replace: run, insert: run, delete: run, rename: run };
}

const GOAL = 'Demo.\n- One\n- Two';

describe('message threads', () => {
  it("keeps threads server-side: the SDK tool runner's default threaded turns run a whole init session", async () => {
    const { sim, client } = await setup();
    const memory = createMemoryStandIn();
    const runner = client.beta.messages.toolRunner({
      model: 'sim',
      max_tokens: 2048,
      system: 'You are a Baton test agent.',
      tools: [betaMemoryTool(handlers(memory))],
      messages: [
        { role: 'user', content: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }) },
      ],
    });
    const final = await runner.runUntilDone();
    expect(final.stop_reason).toBe('end_turn');
    expect(JSON.parse(memory.files.get('/memories/features.json') ?? '[]')).toHaveLength(2);
    expect(sim.received[0]?.thread).toBe('create');
    expect(sim.received.slice(1).every((entry) => entry.thread === 'continue')).toBe(true);
    expect(sim.received.every((entry) => entry.status === 200)).toBe(true);
    // A continue is billed for the whole thread, not only the delta it sent.
    const tokens = sim.received.map((entry) => entry.inputTokensAfter ?? 0);
    expect(tokens).toEqual([...tokens].sort((a, b) => a - b));
  });

  it('runs with thread: false too (full history every turn)', async () => {
    const { sim, client } = await setup();
    const memory = createMemoryStandIn();
    await client.beta.messages
      .toolRunner({
        model: 'sim',
        max_tokens: 2048,
        thread: false,
        tools: [betaMemoryTool(handlers(memory))],
        messages: [
          { role: 'user', content: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }) },
        ],
      })
      .runUntilDone();
    expect(sim.received.every((entry) => entry.thread === undefined)).toBe(true);
    expect(memory.files.has('/memories/startup.md')).toBe(true);
  });

  it('answers a continue of an unknown message with thread_not_found', async () => {
    const { client } = await setup();
    const error = await client.beta.messages
      .create({
        model: 'sim',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
        thread: { type: 'continue', previous_message_id: 'msg_nope' },
      } as never)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).error).toMatchObject({
      error: { details: { error_code: 'thread_not_found' } },
    });
  });

  it('refuses a continue that repeats system or tools', async () => {
    const { client } = await setup();
    const first = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
      thread: { type: 'create' },
    } as never);
    const error = await client.beta.messages
      .create({
        model: 'sim',
        max_tokens: 50,
        system: 'again',
        messages: [{ role: 'user', content: 'more' }],
        thread: { type: 'continue', previous_message_id: first.id },
      } as never)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as Error).message).toMatch(/system/);
    const ok = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'more' }],
      thread: { type: 'continue', previous_message_id: first.id },
    } as never);
    expect(ok.stop_reason).toBe('end_turn');
  });

  it('rejects threads with thread_unsupported_request when started with threads: false', async () => {
    const { client } = await setup({ threads: false });
    const error = await client.beta.messages
      .create({
        model: 'sim',
        max_tokens: 10,
        messages: [{ role: 'user', content: 'hi' }],
        thread: { type: 'create' },
      } as never)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(BadRequestError);
    expect((error as BadRequestError).message).toMatch(/thread: false/);
    expect((error as BadRequestError).error).toMatchObject({
      error: { details: { error_code: 'thread_unsupported_request', unsupported: ['thread'] } },
    });
  });

  it('the script hook answers instead of the agent and sees the resolved thread history', async () => {
    const seen: number[] = [];
    const { client } = await setup({
      script: (request) => {
        seen.push(request.params.messages.length);
        if (request.number === 1)
          return { content: [{ type: 'tool_use', name: 'echo', input: { text: 'ping' } }] };
        if (request.number === 2)
          return { error: { status: 529, type: 'overloaded_error', message: 'scripted overload' } };
        return { content: [{ type: 'text', text: 'done' }] };
      },
    });
    const first = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'go' }],
      tools: [{ name: 'echo', input_schema: { type: 'object' } }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content[0];
    expect(toolUse?.type).toBe('tool_use');
    const history = [
      { role: 'user' as const, content: 'go' },
      { role: 'assistant' as const, content: first.content },
      {
        role: 'user' as const,
        content: [
          {
            type: 'tool_result' as const,
            tool_use_id: toolUse?.type === 'tool_use' ? toolUse.id : '',
            content: 'ping',
          },
        ],
      },
    ];
    const overloaded = await client.beta.messages
      .create({ model: 'sim', max_tokens: 100, messages: history })
      .catch((caught: unknown) => caught);
    expect((overloaded as { status?: number }).status).toBe(529);
    const last = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages: history,
    });
    expect(last.content).toEqual([{ type: 'text', text: 'done', citations: null }]);
    expect(seen).toEqual([1, 3, 3]);
  });
});
