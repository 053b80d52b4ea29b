import type {
  BetaMessageParam,
  BetaRefusalStopDetails,
  BetaStopReason,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
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
  fault?: string;
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
 * Cuts a reply at `maxTokens` (about 4 characters a token) or, for the injected fault, halfway
 * through its first text; tool calls are dropped, since their input would be incomplete.
 */
function truncate(blocks: SimBlock[], maxTokens: number | undefined): SimBlock[] {
  const text =
    blocks.find((block): block is Extract<SimBlock, { type: 'text' }> => block.type === 'text')
      ?.text ?? '';
  const limit = maxTokens === undefined ? Math.max(1, Math.floor(text.length / 2)) : maxTokens * 4;
  return [{ type: 'text', text: text.slice(0, limit) }];
}

function shaped(blocks: SimBlock[], stopReason: BetaStopReason, fault?: string): ShapedReply {
  return {
    blocks,
    stopReason,
    outputTokens: estimateOutputTokens(blocks),
    stopDetails: null,
    ...(fault === undefined ? {} : { fault }),
  };
}

type ReplyFault = Extract<
  PlannedFault,
  { kind: 'max_tokens' | 'context_window' | 'pause_turn' | 'refusal' }
>['kind'];

/** How each reply-shaping fault changes what the model says. */
const REPLY_FAULTS: Readonly<Record<ReplyFault, (reply: Reply, maxTokens: number) => ShapedReply>> =
  {
    max_tokens: (reply, maxTokens) => ({
      ...shaped(truncate(reply.blocks, undefined), 'max_tokens', 'max-tokens'),
      outputTokens: maxTokens,
    }),
    context_window: (reply) =>
      shaped(
        truncate(reply.blocks, undefined),
        'model_context_window_exceeded',
        'context-window-exceeded',
      ),
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
  };

/**
 * The reply as sent: the max_tokens fault, else a reply longer than max_tokens is cut, else the
 * other reply-shaping faults apply.
 */
export function shapeReply(
  reply: Reply,
  fault: PlannedFault | undefined,
  maxTokens: number,
): ShapedReply {
  if (fault?.kind === 'max_tokens') return REPLY_FAULTS.max_tokens(reply, maxTokens);
  const natural = shaped(reply.blocks, reply.stopReason);
  if (natural.outputTokens > maxTokens) {
    return { ...shaped(truncate(reply.blocks, maxTokens), 'max_tokens'), outputTokens: maxTokens };
  }
  if (fault !== undefined && fault.kind in REPLY_FAULTS) {
    return REPLY_FAULTS[fault.kind as ReplyFault](reply, maxTokens);
  }
  return natural;
}
