import Anthropic from '@anthropic-ai/sdk';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  contextRequestParams,
  createUsageAccumulator,
  defineContextConfig,
  previewClearing,
} from '../src/index.js';

/*
 * Drives the real SDK client over HTTP against a local server that answers like the Messages
 * API: proves the resolved config is what the SDK sends (body and beta header) and that a
 * response the SDK parsed feeds the accumulator.
 */

interface SeenRequest {
  beta: string | undefined;
  body: Record<string, unknown>;
}

let server: Server;
let baseURL: string;
const seen: SeenRequest[] = [];

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

beforeAll(async () => {
  server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const body = JSON.parse(text) as Record<string, unknown>;
      const beta = request.headers['anthropic-beta'];
      seen.push({ beta: Array.isArray(beta) ? beta.join(',') : beta, body });
      // Emulate server-side clearing the way the model simulator does.
      const preview = previewClearing({
        messages: body.messages as never,
        config: (body.context_management ?? undefined) as never,
      });
      response.setHeader('content-type', 'application/json');
      response.end(
        JSON.stringify({
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [{ type: 'text', text: 'ok' }],
          stop_reason: 'end_turn',
          stop_sequence: null,
          usage: {
            input_tokens: preview.inputTokensAfter,
            output_tokens: 10,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
          },
          context_management: { applied_edits: preview.appliedEdits },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('a resolved config sent through the real SDK', () => {
  it('sends context_management in the body and the betas in the anthropic-beta header', async () => {
    const client = new Anthropic({ apiKey: 'test', baseURL, maxRetries: 0 });
    const config = defineContextConfig({ preset: 'long-horizon' });
    const messages: Anthropic.Beta.Messages.BetaMessageParam[] = [{ role: 'user', content: 'hi' }];
    for (let index = 0; index < 4; index += 1) {
      messages.push({
        role: 'assistant',
        content: [
          { type: 'tool_use', id: `toolu_${index}`, name: 'bash', input: { command: 'ls' } },
        ],
      });
      messages.push({
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: `toolu_${index}`, content: 'x'.repeat(400) }],
      });
    }
    const low = defineContextConfig({
      preset: 'off',
      clearToolUses: {
        trigger: { type: 'input_tokens', value: 1 },
        keep: { type: 'tool_uses', value: 1 },
      },
    });
    const accumulator = createUsageAccumulator({ model: 'sim' });

    const first = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages,
      ...contextRequestParams(config),
    });
    const second = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages,
      ...contextRequestParams(low),
    });
    accumulator.recordTurn(first);
    accumulator.recordTurn(second);

    expect(seen[0]?.beta).toBe('context-management-2025-06-27,compact-2026-01-12');
    expect(seen[0]?.body.context_management).toEqual(config.context_management);
    expect(seen[0]?.body).not.toHaveProperty('betas');
    expect(seen[1]?.body.context_management).toEqual(low.context_management);
    expect(second.context_management?.applied_edits).toEqual([
      expect.objectContaining({ type: 'clear_tool_uses_20250919', cleared_tool_uses: 3 }),
    ]);
    expect(accumulator.totals()).toMatchObject({ turns: 2, clearedToolUses: 3, outputTokens: 20 });
    expect(accumulator.totals().clearedInputTokens).toBeGreaterThan(0);
  });

  it('preset off sends neither context_management nor a beta header', async () => {
    const client = new Anthropic({ apiKey: 'test', baseURL, maxRetries: 0 });
    seen.length = 0;
    await client.beta.messages.create({
      model: 'sim',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
      ...contextRequestParams(defineContextConfig({ preset: 'off' })),
    });
    expect(seen[0]?.beta).toBeUndefined();
    expect(seen[0]?.body).not.toHaveProperty('context_management');
  });
});
