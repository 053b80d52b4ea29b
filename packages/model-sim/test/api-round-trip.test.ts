import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { ModelSim } from '../src/index.js';
import { useSimClient } from './support/sim-session-fixture.js';

let sim: ModelSim;
let client: Anthropic;
useSimClient((fixture) => ({ sim, client } = fixture));

const hello = { role: 'user' as const, content: 'Hello there' };

describe('messages round trip through the real SDK', () => {
  it('answers a non-streaming request with a parseable message and usage', async () => {
    const message = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 256,
      messages: [hello],
    });
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.model).toBe('sim');
    expect(message.id).toMatch(/^msg_sim_/);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.content[0]?.type).toBe('text');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage.cache_read_input_tokens).toBe(0);
    expect(message.usage.cache_creation_input_tokens).toBe(0);
    expect(sim.requests).toBe(1);
  });

  it('streams the API event sequence and the SDK accumulates the same message', async () => {
    const stream = client.beta.messages.stream({
      model: 'sim',
      max_tokens: 256,
      messages: [hello],
    });
    const types: string[] = [];
    stream.on('streamEvent', (event) => types.push(event.type));
    const message = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.at(-1)).toBe('message_stop');
    expect(types.at(-2)).toBe('message_delta');
    expect(types).toContain('content_block_start');
    expect(types).toContain('content_block_delta');
    expect(types).toContain('content_block_stop');
    expect(message.stop_reason).toBe('end_turn');
    const text = message.content[0];
    expect(text?.type === 'text' && text.text).toContain('Hello there');
    expect(message.usage.output_tokens).toBeGreaterThan(1);
  });

  it('works on the non-beta messages resource too', async () => {
    const message = await client.messages.create({
      model: 'sim',
      max_tokens: 64,
      messages: [hello],
    });
    expect(message.stop_reason).toBe('end_turn');
  });

  it('counts tokens like the usage of a create with the same input', async () => {
    const counted = await client.beta.messages.countTokens({ model: 'sim', messages: [hello] });
    const message = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 64,
      messages: [hello],
    });
    expect(counted.input_tokens).toBe(message.usage.input_tokens);
    expect(counted.context_management).toBeNull();
    expect(sim.stats().countTokensRequests).toBe(1);
    expect(sim.requests).toBe(1);
  });
});
