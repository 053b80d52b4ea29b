import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScript } from './types.js';

/** Options of `scriptedCommands`. */
export interface ScriptedCommandsOptions {
  /** Bash commands the model sends, one tool call each, in its first turn of every session. */
  commands: readonly string[];
  /** Receives each command's tool result when the next request carries it back. Default none. */
  onResult?: (result: { command: string; output: string; isError: boolean }) => void;
}

const STEP = 'scripted-command';

function toolUseIds(messages: readonly BetaMessageParam[]): Set<string> {
  const ids = new Set<string>();
  for (const message of messages) {
    if (message.role !== 'assistant' || typeof message.content === 'string') continue;
    for (const block of message.content) if (block.type === 'tool_use') ids.add(block.id);
  }
  return ids;
}

/**
 * A `script` for the simulator: in the first turn of every session (a request holding only the
 * opening user message) the model runs `commands` with the bash tool, as a hostile or curious
 * model would; every other turn is the scripted agent's, so the project still gets done. The
 * calls carry the simulator's own id form with step `scripted-command`, which the agent's plan
 * ignores.
 */
export function scriptedCommands(options: ScriptedCommandsOptions): SimScript {
  const reported = new Set<string>();
  return ({ messages, number }) => {
    const ours = toolUseIds(messages);
    for (const message of messages) {
      if (message.role !== 'user' || typeof message.content === 'string') continue;
      for (const block of message.content) {
        if (block.type !== 'tool_result' || reported.has(block.tool_use_id)) continue;
        const index = Number(block.tool_use_id.match(new RegExp(`c(\\d+)_${STEP}$`))?.[1]);
        if (!ours.has(block.tool_use_id) || !Number.isInteger(index)) continue;
        reported.add(block.tool_use_id);
        const output =
          typeof block.content === 'string'
            ? block.content
            : (block.content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
        options.onResult?.({
          command: options.commands[index] ?? '',
          output,
          isError: block.is_error === true,
        });
      }
    }
    if (messages.length !== 1 || messages[0]?.role !== 'user') return undefined;
    return {
      content: options.commands.map((command, index) => ({
        type: 'tool_use' as const,
        id: `toolu_sim_t${number}c${index}_${STEP}`,
        name: 'bash',
        input: { command },
      })),
    };
  };
}
