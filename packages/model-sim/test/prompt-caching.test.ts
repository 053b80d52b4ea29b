import Anthropic from '@anthropic-ai/sdk';
import type {
  BetaCacheControlEphemeral,
  BetaMessageParam,
  BetaTextBlockParam,
  BetaToolUnion,
  BetaUsage,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { afterEach, describe, expect, it } from 'vitest';
import { type ModelSim, type ModelSimOptions, startModelSim } from '../src/index.js';

/*
 * One test per rule of the prompt-caching documentation the simulator bills by (see
 * docs/model-sim.md). Token counts are the simulator's estimate: 4 characters a token.
 */

let sim: ModelSim | undefined;
let now = 1_000_000;

afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function start(options: ModelSimOptions = {}): Promise<Anthropic> {
  now = 1_000_000;
  sim = await startModelSim({
    clock: () => now,
    script: () => ({ content: [{ type: 'text', text: 'ok' }] }),
    ...options,
  });
  return new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 });
}

const FIVE_MINUTES: BetaCacheControlEphemeral = { type: 'ephemeral' };
const ONE_HOUR: BetaCacheControlEphemeral = { type: 'ephemeral', ttl: '1h' };

/** A text of `tokens` estimated tokens. */
function text(tokens: number, seed = 'x'): string {
  return seed.repeat(tokens * 4);
}

const TOOLS: BetaToolUnion[] = [{ type: 'bash_20250124', name: 'bash' }];
const SYSTEM_TEXT = text(2_000, 's');

function system(control?: BetaCacheControlEphemeral): BetaTextBlockParam[] {
  return [{ type: 'text', text: SYSTEM_TEXT, ...(control ? { cache_control: control } : {}) }];
}

function user(content: string, control?: BetaCacheControlEphemeral): BetaMessageParam {
  return {
    role: 'user',
    content: [{ type: 'text', text: content, ...(control ? { cache_control: control } : {}) }],
  };
}

async function send(
  client: Anthropic,
  request: {
    system?: BetaTextBlockParam[];
    tools?: BetaToolUnion[];
    messages: BetaMessageParam[];
    model?: string;
    cache_control?: BetaCacheControlEphemeral;
  },
): Promise<BetaUsage> {
  const message = await client.beta.messages.create({
    model: request.model ?? 'sim',
    max_tokens: 100,
    tools: request.tools ?? TOOLS,
    ...(request.system ? { system: request.system } : {}),
    ...(request.cache_control ? { cache_control: request.cache_control } : {}),
    messages: request.messages,
  });
  return message.usage;
}

function total(usage: BetaUsage): number {
  return (
    usage.input_tokens +
    (usage.cache_read_input_tokens ?? 0) +
    (usage.cache_creation_input_tokens ?? 0)
  );
}

describe('the simulator bills prompt caching as the API documents it', () => {
  it('without cache_control nothing is read or written', async () => {
    const client = await start();
    for (let index = 0; index < 2; index += 1) {
      const usage = await send(client, { system: system(), messages: [user('hi')] });
      expect(usage.cache_read_input_tokens).toBe(0);
      expect(usage.cache_creation_input_tokens).toBe(0);
    }
  });

  it('a breakpoint caches the prefix up to and including its block; the next request reads it', async () => {
    const client = await start();
    const first = await send(client, { system: system(FIVE_MINUTES), messages: [user('hi')] });
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThan(2_000);
    expect(first.cache_creation).toEqual({
      ephemeral_5m_input_tokens: first.cache_creation_input_tokens,
      ephemeral_1h_input_tokens: 0,
    });
    const second = await send(client, {
      system: system(FIVE_MINUTES),
      messages: [user('something else')],
    });
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBe(0);
    // Everything after the breakpoint is plain input.
    expect(second.input_tokens).toBe(total(second) - (second.cache_read_input_tokens ?? 0));
  });

  it('the prefix runs tools -> system -> messages: a changed tool misses the system breakpoint, a changed message does not', async () => {
    const client = await start();
    await send(client, { system: system(FIVE_MINUTES), messages: [user('a')] });
    const otherTools = await send(client, {
      system: system(FIVE_MINUTES),
      tools: [
        { type: 'bash_20250124', name: 'bash' },
        { type: 'memory_20250818', name: 'memory' },
      ],
      messages: [user('a')],
    });
    expect(otherTools.cache_read_input_tokens).toBe(0);
    const otherMessage = await send(client, {
      system: system(FIVE_MINUTES),
      messages: [user('b')],
    });
    expect(otherMessage.cache_read_input_tokens).toBeGreaterThan(2_000);
  });

  it('a changed earlier block invalidates every later breakpoint but not the ones before it', async () => {
    const client = await start();
    const history = (first: string): BetaMessageParam[] => [
      user(first),
      { role: 'assistant', content: [{ type: 'text', text: text(300, 'a') }] },
      user('next', FIVE_MINUTES),
    ];
    await send(client, { system: system(FIVE_MINUTES), messages: history('one') });
    const changed = await send(client, { system: system(FIVE_MINUTES), messages: history('two') });
    // Only the system breakpoint's prefix is still valid.
    expect(changed.cache_read_input_tokens).toBeGreaterThan(2_000);
    expect(changed.cache_read_input_tokens).toBeLessThan(2_100);
    expect(changed.cache_creation_input_tokens).toBeGreaterThan(300);
  });

  it('at most four breakpoints per request', async () => {
    const client = await start();
    const messages = [1, 2, 3, 4].flatMap((turn): BetaMessageParam[] => [
      user(`u${turn}`, FIVE_MINUTES),
      { role: 'assistant', content: [{ type: 'text', text: `a${turn}` }] },
    ]);
    messages.push(user('last'));
    await expect(send(client, { system: system(FIVE_MINUTES), messages })).rejects.toThrow(
      'A maximum of 4 blocks with cache_control may be provided. Found 5.',
    );
  });

  it('a breakpoint looks back about 20 blocks for an earlier entry, no further', async () => {
    const client = await start();
    const grown = (blocks: number): BetaMessageParam[] => {
      const content: BetaTextBlockParam[] = [];
      for (let index = 0; index < blocks; index += 1)
        content.push({ type: 'text', text: `block ${index}` });
      content.push({ type: 'text', text: 'end', cache_control: FIVE_MINUTES });
      return [
        user(text(600, 'u'), FIVE_MINUTES),
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        { role: 'user', content },
      ];
    };
    const base: BetaMessageParam[] = [user(text(600, 'u'), FIVE_MINUTES)];
    // Only the conversation breakpoint: the first user message's prefix is cached.
    await send(client, { messages: base });
    // 19 blocks + the assistant's text + the marked block: the written entry is 21 blocks back.
    const far = await send(client, { messages: grown(19).map(dropEarlyMark) });
    expect(far.cache_read_input_tokens).toBe(0);
    const near = await send(client, { messages: grown(10).map(dropEarlyMark) });
    expect(near.cache_read_input_tokens).toBeGreaterThan(600);
  });

  it('a prefix shorter than the model minimum is not cached (4,096 tokens on claude-opus-4-5)', async () => {
    const client = await start();
    const short = await send(client, {
      model: 'claude-opus-4-5',
      system: system(FIVE_MINUTES),
      messages: [user('hi')],
    });
    expect(short.cache_creation_input_tokens).toBe(0);
    const long: BetaTextBlockParam[] = [
      { type: 'text', text: text(4_200), cache_control: FIVE_MINUTES },
    ];
    const written = await send(client, {
      model: 'claude-opus-4-5',
      system: long,
      messages: [user('hi')],
    });
    expect(written.cache_creation_input_tokens).toBeGreaterThan(4_096);
    // The same prefix under another model is another cache.
    const otherModel = await send(client, {
      model: 'claude-sonnet-4-5',
      system: long,
      messages: [user('hi')],
    });
    expect(otherModel.cache_read_input_tokens).toBe(0);
  });

  it('a 5-minute entry expires five minutes after its last use; a read refreshes it', async () => {
    const client = await start();
    const request = { system: system(FIVE_MINUTES), messages: [user('hi')] };
    await send(client, request);
    now += 4 * 60_000;
    expect((await send(client, request)).cache_read_input_tokens).toBeGreaterThan(0);
    now += 4 * 60_000; // 8 minutes after the write, 4 after the read
    expect((await send(client, request)).cache_read_input_tokens).toBeGreaterThan(0);
    now += 5 * 60_000 + 1;
    const expired = await send(client, request);
    expect(expired.cache_read_input_tokens).toBe(0);
    expect(expired.cache_creation_input_tokens).toBeGreaterThan(0);
  });

  it('a 1-hour entry outlives the 5-minute one and is billed as a 1-hour write', async () => {
    const client = await start();
    const first = await send(client, {
      system: system(ONE_HOUR),
      messages: [user(text(600, 'u'), FIVE_MINUTES)],
    });
    expect(first.cache_creation?.ephemeral_1h_input_tokens).toBeGreaterThan(2_000);
    expect(first.cache_creation?.ephemeral_5m_input_tokens).toBeGreaterThan(600);
    now += 30 * 60_000;
    const later = await send(client, {
      system: system(ONE_HOUR),
      messages: [user(text(600, 'u'), FIVE_MINUTES)],
    });
    expect(later.cache_read_input_tokens).toBe(first.cache_creation?.ephemeral_1h_input_tokens);
    expect(later.cache_creation?.ephemeral_5m_input_tokens).toBe(
      first.cache_creation?.ephemeral_5m_input_tokens,
    );
  });

  it('a 1-hour breakpoint after a 5-minute one is refused', async () => {
    const client = await start();
    await expect(
      send(client, { system: system(FIVE_MINUTES), messages: [user('hi', ONE_HOUR)] }),
    ).rejects.toThrow("ttl='1h' must not come after one with ttl='5m'");
  });

  it('cache_control on a thinking block is refused', async () => {
    const client = await start();
    const thinking = {
      role: 'assistant',
      content: [{ type: 'thinking', thinking: 't', signature: 's', cache_control: FIVE_MINUTES }],
    } as unknown as BetaMessageParam;
    await expect(send(client, { messages: [user('a'), thinking, user('b')] })).rejects.toThrow(
      'thinking blocks cannot be cached directly',
    );
  });

  it('top-level cache_control (automatic caching) marks the last block', async () => {
    const client = await start();
    const messages = [user(text(600, 'u'))];
    await send(client, { messages, cache_control: FIVE_MINUTES });
    const again = await send(client, {
      messages: [...messages, { role: 'assistant', content: 'ok' }, user('more')],
      cache_control: FIVE_MINUTES,
    });
    expect(again.cache_read_input_tokens).toBeGreaterThan(600);
  });

  it('a context-editing clear invalidates the cache from the cleared block on', async () => {
    const client = await start();
    const big = text(3_000, 'r');
    const history: BetaMessageParam[] = [user('start')];
    for (let turn = 1; turn <= 3; turn += 1) {
      history.push({
        role: 'assistant',
        content: [{ type: 'tool_use', id: `t${turn}`, name: 'bash', input: { command: 'ls' } }],
      });
      history.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `t${turn}`, content: big }],
      });
    }
    const marked = (messages: BetaMessageParam[]): BetaMessageParam[] =>
      messages.map((message, index) =>
        index === messages.length - 1 && Array.isArray(message.content)
          ? {
              ...message,
              content: message.content.map((block) => ({ ...block, cache_control: FIVE_MINUTES })),
            }
          : message,
      ) as BetaMessageParam[];
    await send(client, { system: system(FIVE_MINUTES), messages: marked(history) });
    const message = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      tools: TOOLS,
      system: system(FIVE_MINUTES),
      messages: marked(history),
      betas: ['context-management-2025-06-27'],
      context_management: {
        edits: [
          {
            type: 'clear_tool_uses_20250919',
            trigger: { type: 'input_tokens', value: 5_000 },
            keep: { type: 'tool_uses', value: 1 },
          },
        ],
      },
    });
    expect(message.context_management?.applied_edits).toHaveLength(1);
    // Only tools + system + the first user message are read; the rest is written again.
    expect(message.usage.cache_read_input_tokens).toBeGreaterThan(2_000);
    expect(message.usage.cache_read_input_tokens).toBeLessThan(2_100);
    expect(message.usage.cache_creation_input_tokens).toBeGreaterThan(3_000);
    expect(sim?.received.at(-1)?.cache).toMatchObject({ breakpoints: 2 });
  });
});

/** Keeps only the last block's mark (the test's histories mark their first message too). */
function dropEarlyMark(message: BetaMessageParam, index: number): BetaMessageParam {
  if (index !== 0 || !Array.isArray(message.content)) return message;
  const content = message.content.map((block) => {
    const { cache_control: _mark, ...rest } = block as BetaTextBlockParam;
    return rest;
  });
  return { ...message, content } as BetaMessageParam;
}
