import type {
  BetaContentBlockParam,
  BetaContextManagementConfig,
  BetaMessageParam,
  BetaToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { API_DEFAULTS } from './constants.js';
import { CLEARED_TOOL_RESULT_TEXT } from './preview-clearing.js';
import type { ResolvedContextConfig } from './types.js';
import type { AppliedEdit } from './usage-accumulator.js';

/**
 * Applies to the client's own history the clearing a response reports, so the clear sticks.
 *
 * The API clears on every request whose full history is over the trigger, keeping only the
 * `keep` most recent tool uses: once a session is over the trigger, the kept window slides by one
 * tool use each request, and each slide changes the prompt there, so the cache is rewritten from
 * the window's start on every request. Replacing the cleared results in the client's history (as
 * the server did) brings the history under the trigger: the next requests send exactly the
 * cleared prompt, read it from the cache, and clearing happens again only when the history grows
 * over the trigger once more. That is what makes a clear pay for its cache rewrite (see
 * `clearingCacheCost`).
 *
 * A `clear_tool_uses_20250919` edit that cleared N tool uses clears the N oldest tool uses that
 * are not excluded and not cleared yet (the API's order); inputs are blanked per
 * `clear_tool_inputs`. A `clear_thinking_20251015` edit removes the thinking of all but the `keep`
 * most recent assistant turns that have thinking. Messages are copied on write; the input is not
 * mutated. Returns the same array when nothing changed.
 */
export function mirrorAppliedEdits(
  messages: readonly BetaMessageParam[],
  config: ResolvedContextConfig | BetaContextManagementConfig | null | undefined,
  appliedEdits: readonly AppliedEdit[],
): readonly BetaMessageParam[] {
  if (appliedEdits.length === 0 || config === null || config === undefined) return messages;
  const management =
    'betas' in config ? config.context_management : (config as BetaContextManagementConfig);
  const edits = management?.edits ?? [];
  let working: BetaMessageParam[] | undefined;
  const copy = (index: number): BetaContentBlockParam[] => {
    working ??= messages.slice();
    const message = working[index] as BetaMessageParam;
    const content = Array.isArray(message.content)
      ? (message.content.slice() as BetaContentBlockParam[])
      : [];
    working[index] = { ...message, content } as BetaMessageParam;
    return content;
  };
  for (const applied of appliedEdits) {
    if (applied.type === 'clear_tool_uses_20250919') {
      const edit = edits.find((candidate) => candidate.type === 'clear_tool_uses_20250919');
      if (edit === undefined) continue;
      mirrorToolUses(working ?? messages, edit, applied.cleared_tool_uses, copy);
    } else if (applied.type === 'clear_thinking_20251015') {
      const edit = edits.find((candidate) => candidate.type === 'clear_thinking_20251015');
      const keep = edit?.keep ?? API_DEFAULTS.clearThinking.keep;
      mirrorThinking(working ?? messages, keep, copy);
    }
  }
  return working ?? messages;
}

function blocksOf(message: BetaMessageParam | undefined): BetaContentBlockParam[] | undefined {
  if (message === undefined || message.role === 'system' || !Array.isArray(message.content))
    return undefined;
  return message.content as BetaContentBlockParam[];
}

function mirrorToolUses(
  messages: readonly BetaMessageParam[],
  edit: Extract<
    NonNullable<BetaContextManagementConfig['edits']>[number],
    { type: 'clear_tool_uses_20250919' }
  >,
  count: number,
  copy: (index: number) => BetaContentBlockParam[],
): void {
  const excluded = new Set(edit.exclude_tools ?? []);
  const inputs = edit.clear_tool_inputs ?? false;
  const results = new Map<string, { message: number; block: number }>();
  messages.forEach((message, messageIndex) => {
    if (message.role !== 'user') return;
    blocksOf(message)?.forEach((block, blockIndex) => {
      if (block.type === 'tool_result')
        results.set(block.tool_use_id, { message: messageIndex, block: blockIndex });
    });
  });
  let left = count;
  messages.forEach((message, messageIndex) => {
    if (left <= 0 || message.role !== 'assistant') return;
    blocksOf(message)?.forEach((block, blockIndex) => {
      if (left <= 0 || block.type !== 'tool_use' || excluded.has(block.name)) return;
      const at = results.get(block.id);
      const result =
        at === undefined
          ? undefined
          : (blocksOf(messages[at.message])?.[at.block] as BetaToolResultBlockParam | undefined);
      const clearsInput = inputs === true || (Array.isArray(inputs) && inputs.includes(block.name));
      // The API counts only uses it changed: an already cleared result, or one with no result
      // and an input it keeps, is passed over.
      if (result?.content === CLEARED_TOOL_RESULT_TEXT && !clearsInput) return;
      if (result === undefined && !clearsInput) return;
      left -= 1;
      if (at !== undefined && result !== undefined) {
        copy(at.message)[at.block] = { ...result, content: CLEARED_TOOL_RESULT_TEXT };
      }
      if (clearsInput) {
        const blocks = copy(messageIndex);
        blocks[blockIndex] = { ...block, input: {} };
      }
    });
  });
}

function mirrorThinking(
  messages: readonly BetaMessageParam[],
  keep: NonNullable<
    Extract<
      NonNullable<BetaContextManagementConfig['edits']>[number],
      { type: 'clear_thinking_20251015' }
    >['keep']
  >,
  copy: (index: number) => BetaContentBlockParam[],
): void {
  if (keep === 'all' || keep.type === 'all') return;
  const isThinking = (block: BetaContentBlockParam) =>
    block.type === 'thinking' || block.type === 'redacted_thinking';
  const withThinking = messages.flatMap((message, index) =>
    message.role === 'assistant' && blocksOf(message)?.some(isThinking) === true ? [index] : [],
  );
  for (const index of withThinking.slice(0, Math.max(0, withThinking.length - keep.value))) {
    const blocks = copy(index);
    const kept = blocks.filter((block) => !isThinking(block));
    blocks.splice(0, blocks.length, ...kept);
  }
}
