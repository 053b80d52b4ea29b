import { createRedisTranscripts, type ProjectRepository } from '@baton/projects';
import type { TranscriptMessage } from '@baton/session';
import { HOSTILE_INPUTS, HOSTILE_MARKDOWN } from '../fixtures/hostile.js';

/**
 * A transcript as the worker writes it, whose every text is hostile: the prompt, guidance, the
 * model's text, a tool call's input and its result carry the corpus of `fixtures/hostile.ts`.
 */
export async function seedHostileTranscript(
  repository: ProjectRepository,
  projectId: string,
  sessionId: string,
): Promise<void> {
  const store = createRedisTranscripts({
    redis: repository.redis,
    keys: repository.keys,
    projectId,
  });
  const at = Date.now();
  await store.start({
    projectId,
    sessionId,
    sessionNumber: 1,
    kind: 'init',
    model: 'sim',
    interrupted: false,
    startedAt: at,
  });
  const usage = {
    inputTokens: 900,
    outputTokens: 120,
    cacheReadInputTokens: 100,
    cacheCreationInputTokens: 0,
    cacheWrite5mInputTokens: 0,
    cacheWrite1hInputTokens: 0,
  };
  const messages: TranscriptMessage[] = [
    {
      role: 'user',
      turn: 1,
      phase: 'work',
      at,
      content: [
        { type: 'text', source: 'prompt', text: `Build it.\n${HOSTILE_INPUTS.join('\n')}` },
      ],
    },
    {
      role: 'assistant',
      turn: 1,
      phase: 'work',
      at: at + 1,
      stopReason: 'tool_use',
      usage,
      costUsd: 0.002,
      durationMs: 40,
      appliedEdits: [],
      clearedInputTokens: 0,
      content: [
        { type: 'text', source: 'model', text: HOSTILE_MARKDOWN },
        {
          type: 'tool_use',
          id: 'toolu_hostile',
          name: 'bash',
          input: { command: '<script>window.__pwned = 102</script>' },
        },
      ],
    },
    {
      role: 'user',
      turn: 2,
      phase: 'work',
      at: at + 2,
      content: [
        {
          type: 'tool_result',
          toolUseId: 'toolu_hostile',
          isError: false,
          content: `${HOSTILE_INPUTS.join('\n')}\n[transcript cap: 10 of 8010 characters not kept (at most 8000 per block)]`,
          capped: { characters: 8_010, kept: 8_000 },
        },
        {
          type: 'text',
          source: 'guidance',
          guidanceIds: ['g-hostile'],
          text: '<operator_guidance id="g-hostile"><img src=x onerror="window.__pwned = 101"></operator_guidance>',
        },
      ],
    },
    {
      role: 'assistant',
      turn: 2,
      phase: 'work',
      at: at + 3,
      stopReason: 'end_turn',
      usage,
      costUsd: 0.002,
      durationMs: 40,
      appliedEdits: [
        { type: 'clear_tool_uses_20250919', cleared_tool_uses: 1, cleared_input_tokens: 700 },
      ],
      clearedInputTokens: 700,
      content: [{ type: 'text', source: 'model', text: 'Done. Marker: needle-in-transcript.' }],
    },
  ];
  await store.append(sessionId, messages);
  await store.end(sessionId, {
    endedAt: at + 4,
    outcome: 'completed',
    reason: 'end_turn',
    stopReason: 'end_turn',
    turns: 2,
    costUsd: 0.004,
  });
}
