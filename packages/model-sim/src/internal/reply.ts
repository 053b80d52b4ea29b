import type {
  BetaMessageParam,
  BetaRefusalStopDetails,
  BetaStopReason,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { partialParse } from '@anthropic-ai/sdk/_vendor/partial-json-parser/parser';
import type { SimScriptResult } from '../types.js';
import { planTurn } from './agent/agent.js';
import { estimateOutputTokens } from './context-editing.js';
import type { PlannedFault } from './faults.js';
import { refusalDetails } from './message.js';
import type { SimBlock } from './message.js';

/** What the model says in one turn, before faults shape it. */
export interface Reply {
  blocks: SimBlock[];
  stopReason: BetaStopReason;
}

/** A reply after faults: what is sent, its output tokens, and the fault's name for the record. */
export interface ShapedReply extends Reply {
  outputTokens: number;
  stopDetails: BetaRefusalStopDetails | null;
  fault?: string | undefined;
}

/** The scripted agent's turn. */
export function replyFromAgent(
  messages: BetaMessageParam[],
  tools: unknown,
  turn: number,
  parallelToolCalls: boolean,
): Reply {
  const names = new Set<string>();
  if (Array.isArray(tools)) {
    for (const tool of tools) {
      const name = (tool as { name?: unknown } | null)?.name;
      if (typeof name === 'string') names.add(name);
    }
  }
  const planned = planTurn(messages, { tools: names, parallelToolCalls });
  const blocks: SimBlock[] = [{ type: 'text', text: planned.text }];
  planned.calls.forEach((call, index) => {
    blocks.push({
      type: 'tool_use',
      id: `toolu_sim_t${turn}c${index}_${call.step}`,
      name: call.name,
      input: call.input,
    });
  });
  return { blocks, stopReason: planned.calls.length > 0 ? 'tool_use' : 'end_turn' };
}

/** A test script's turn. */
export function replyFromScript(
  result: Extract<SimScriptResult, { content: unknown }>,
  turn: number,
): Reply {
  const blocks: SimBlock[] = result.content.map((block, index) =>
    block.type === 'text'
      ? { type: 'text', text: block.text }
      : {
          type: 'tool_use',
          id: block.id ?? `toolu_sim_t${turn}c${index}_script`,
          name: block.name,
          input: block.input,
        },
  );
  const hasToolUse = blocks.some((block) => block.type === 'tool_use');
  return { blocks, stopReason: result.stopReason ?? (hasToolUse ? 'tool_use' : 'end_turn') };
}

/**
 * Cuts a reply after `chars` characters of output (about 4 a token), the way a model stops at
 * its limit: text is cut mid-sentence, and a `tool_use` block the cut falls into is kept with its
 * input JSON cut mid-way (`partialJson`, streamed as is; `input` is what the SDK's own partial
 * JSON parser makes of it). Blocks after the cut are dropped.
 */
function cutAt(blocks: SimBlock[], chars: number): SimBlock[] {
  const out: SimBlock[] = [];
  let left = Math.max(0, chars);
  for (const block of blocks) {
    if (left <= 0) break;
    if (block.type === 'text') {
      const text = block.text.slice(0, left);
      left -= block.text.length;
      if (text.trim() !== '') out.push({ type: 'text', text });
      continue;
    }
    const json = JSON.stringify(block.input ?? {});
    if (json.length <= left) {
      out.push(block);
      left -= json.length;
      continue;
    }
    out.push(cutToolUse(block, left));
    left = 0;
  }
  return out;
}

function cutToolUse(block: Extract<SimBlock, { type: 'tool_use' }>, chars: number): SimBlock {
  const partialJson = JSON.stringify(block.input ?? {}).slice(0, Math.max(1, chars));
  let input: unknown;
  try {
    input = partialParse(partialJson) ?? {};
  } catch {
    input = {};
  }
  return { ...block, input, partialJson };
}

/** Characters of output in a reply (text plus tool input JSON), for cutting it in half. */
function outputChars(blocks: SimBlock[]): number {
  return blocks.reduce(
    (sum, block) =>
      sum + (block.type === 'text' ? block.text.length : JSON.stringify(block.input ?? {}).length),
    0,
  );
}

/**
 * The `max_tokens` fault: a reply with a tool call is cut in the middle of its first tool call's
 * input (all text before it kept); a text-only reply is cut halfway through.
 */
function cutForFault(blocks: SimBlock[]): SimBlock[] {
  const first = blocks.findIndex((block) => block.type === 'tool_use');
  if (first < 0) return cutAt(blocks, Math.max(1, Math.floor(outputChars(blocks) / 2)));
  const before = blocks.slice(0, first);
  const tool = blocks[first] as Extract<SimBlock, { type: 'tool_use' }>;
  const json = JSON.stringify(tool.input ?? {});
  return [...before, cutToolUse(tool, Math.max(1, Math.floor(json.length / 2)))];
}

function shaped(blocks: SimBlock[], stopReason: BetaStopReason, fault?: string): ShapedReply {
  return {
    blocks,
    stopReason,
    outputTokens: estimateOutputTokens(blocks),
    stopDetails: null,
    fault,
  };
}

type ReplyFault = Extract<
  PlannedFault,
  { kind: 'max_tokens' | 'context_window' | 'pause_turn' | 'refusal' | 'empty_reply' }
>['kind'];

/** How each reply-shaping fault changes what the model says. */
const REPLY_FAULTS: Readonly<Record<ReplyFault, (reply: Reply, maxTokens: number) => ShapedReply>> =
  {
    max_tokens: (reply, maxTokens) => ({
      ...shaped(cutForFault(reply.blocks), 'max_tokens', 'max-tokens'),
      outputTokens: maxTokens,
    }),
    context_window: (reply) =>
      shaped(cutForFault(reply.blocks), 'model_context_window_exceeded', 'context-window-exceeded'),
    // The model pauses before acting: its words so far, no tool call; sending the turn again goes on.
    pause_turn: (reply) =>
      shaped(
        reply.blocks.filter((block) => block.type === 'text'),
        'pause_turn',
        'pause-turn',
      ),
    refusal: () => ({
      ...shaped(
        [{ type: 'text', text: "I can't help with this request (simulated refusal)." }],
        'refusal',
        'refusal',
      ),
      stopDetails: refusalDetails(),
    }),
    // What models sometimes answer right after tool results: nothing at all.
    empty_reply: () => ({ ...shaped([], 'end_turn', 'empty-reply'), outputTokens: 2 }),
  };

/**
 * The reply as sent: the max_tokens fault; else a reply longer than the context window's room
 * stops with `model_context_window_exceeded`, one longer than max_tokens with `max_tokens` (both
 * cut where the limit falls, mid tool call included); else the other reply-shaping faults apply.
 */
export function shapeReply(
  reply: Reply,
  fault: PlannedFault | undefined,
  maxTokens: number,
  roomTokens: number = Number.POSITIVE_INFINITY,
): ShapedReply {
  if (fault?.kind === 'max_tokens') return REPLY_FAULTS.max_tokens(reply, maxTokens);
  const natural = shaped(reply.blocks, reply.stopReason);
  if (natural.outputTokens > roomTokens && roomTokens < maxTokens) {
    const room = Math.max(1, roomTokens);
    return {
      ...shaped(
        cutAt(reply.blocks, room * 4),
        'model_context_window_exceeded',
        'context-window-full',
      ),
      outputTokens: room,
    };
  }
  if (natural.outputTokens > maxTokens) {
    return { ...shaped(cutAt(reply.blocks, maxTokens * 4), 'max_tokens'), outputTokens: maxTokens };
  }
  if (fault !== undefined && fault.kind in REPLY_FAULTS) {
    return REPLY_FAULTS[fault.kind as ReplyFault](reply, maxTokens);
  }
  return natural;
}
