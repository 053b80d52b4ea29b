import type { AnthropicBeta } from '@anthropic-ai/sdk/resources/beta/beta';
import type {
  BetaContextManagementConfig,
  BetaContextManagementResponse,
  BetaMessage,
  MessageCreateParamsNonStreaming,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { contextRequestParams } from './request-params.js';
import { defineContextConfig } from './define-context-config.js';
import { ContextConfigError } from './errors.js';
import type { ClearingPreview } from './preview-clearing.js';
import type { TurnResponse } from './usage-accumulator.js';
import type { ResolvedContextConfig } from './types.js';

// These tests are checked by `tsc --noEmit` (the package typecheck) and also run under vitest.
describe('output is assignable to the SDK request params', () => {
  it('context_management is a BetaContextManagementConfig', () => {
    expectTypeOf<
      NonNullable<ResolvedContextConfig['context_management']>
    >().toExtend<BetaContextManagementConfig>();
    expectTypeOf<ResolvedContextConfig['betas']>().toExtend<AnthropicBeta[]>();
    expectTypeOf<ResolvedContextConfig['betas']>().toExtend<string[]>();
  });

  it('a resolved config spreads into MessageCreateParamsNonStreaming', () => {
    const config = defineContextConfig({ preset: 'long-horizon', clearThinking: {} });
    const params: MessageCreateParamsNonStreaming = {
      model: 'sim',
      max_tokens: 1024,
      messages: [{ role: 'user', content: 'hi' }],
      ...contextRequestParams(config),
    };
    expectTypeOf(params).toExtend<MessageCreateParamsNonStreaming>();
    // The fields also fit one by one.
    const direct: MessageCreateParamsNonStreaming = {
      model: 'sim',
      max_tokens: 1024,
      messages: [],
      betas: config.betas,
      ...(config.context_management ? { context_management: config.context_management } : {}),
    };
    expectTypeOf(direct).toExtend<MessageCreateParamsNonStreaming>();
  });

  it('applied edits of the preview have the response shape', () => {
    expectTypeOf<ClearingPreview['appliedEdits'][number]>().toExtend<
      BetaContextManagementResponse['applied_edits'][number]
    >();
  });

  it('a BetaMessage is accepted by recordTurn', () => {
    expectTypeOf<BetaMessage>().toExtend<TurnResponse>();
  });
});

describe('the input type is as strict as the runtime check', () => {
  const refused = (run: () => unknown) => expect(run).toThrow(ContextConfigError);

  it('rejects unknown keys and wrong shapes at compile time', () => {
    refused(() =>
      defineContextConfig({
        // @ts-expect-error unknown top-level key
        presets: 'coding',
      }),
    );
    refused(() =>
      defineContextConfig({
        // @ts-expect-error keep counts tool uses, not thinking turns
        clearToolUses: { keep: { type: 'thinking_turns', value: 1 } },
      }),
    );
    refused(() =>
      defineContextConfig({
        // @ts-expect-error compaction triggers only on input tokens
        compaction: { trigger: { type: 'tool_uses', value: 60_000 } },
      }),
    );
    refused(() =>
      defineContextConfig({
        // @ts-expect-error a group is false or an object, never true
        clearThinking: true,
      }),
    );
  });
});
