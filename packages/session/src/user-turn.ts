import type { BetaContentBlockParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';

/**
 * The one place a user turn is built. The Messages API refuses a turn that follows `tool_use`
 * blocks unless it begins with their `tool_result` blocks (`messages.N: Did not find 1
 * tool_result block(s) at the beginning of this message`), refuses empty or whitespace-only text
 * blocks, and refuses an empty message. Baton's own notes (hook refusals, guidance, stall
 * warnings, checkpoint and interruption notes) are text blocks queued beside the tool results
 * in whatever order the steps that produced them ran; this puts every `tool_result` first (in the
 * order they were queued), keeps the notes after them, and drops text that says nothing.
 * An empty array means there is nothing to send: the caller must not send an empty message.
 */
export function buildUserTurn(blocks: readonly BetaContentBlockParam[]): BetaContentBlockParam[] {
  const results: BetaContentBlockParam[] = [];
  const rest: BetaContentBlockParam[] = [];
  for (const block of blocks) {
    if (block.type === 'tool_result') results.push(block);
    else if (block.type !== 'text' || block.text.trim() !== '') rest.push(block);
  }
  return [...results, ...rest];
}

/** A note for the model as a text block, or nothing when the note says nothing. */
export function noteBlock(text: string): BetaContentBlockParam[] {
  return text.trim() === '' ? [] : [{ type: 'text', text }];
}
