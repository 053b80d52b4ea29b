import type Anthropic from '@anthropic-ai/sdk';
import type {
  BetaAssistantMessageParam,
  BetaContextManagementConfig,
  BetaMessage,
  BetaMessageParam,
  BetaToolResultBlockParam,
  BetaToolUnion,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { ToolOutcome } from './memory-stand-in.js';
import type { WorkspaceTools } from './workspace-tools.js';

/** The tools a Baton session offers, by the names and types of contracts.md. */
export const SESSION_TOOLS: BetaToolUnion[] = [
  { type: 'memory_20250818', name: 'memory' },
  { type: 'bash_20250124', name: 'bash' },
  { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
];

export interface PromptOptions {
  kind: 'init' | 'resume' | 'end';
  session: number;
  goal?: string;
  interrupted?: boolean;
}

/** A first user message carrying the tag line the simulator reacts to (shape of @baton/session's prompts). */
export function sessionPrompt(options: PromptOptions): string {
  const tag = `<baton_session kind="${options.kind}" project="demo" session="${options.session}" interrupted="${options.interrupted === true ? 'true' : 'false'}">`;
  const goal = options.goal === undefined ? '' : `\n\n<goal>\n${options.goal}\n</goal>`;
  return `${tag}\n\nDo the work of this session.${goal}`;
}

export interface DriveOptions {
  client: Anthropic;
  /** The memory tool: the stand-in, or any handler with the same execute shape. */
  memory: { execute(input: unknown): ToolOutcome | Promise<ToolOutcome> };
  workspace: WorkspaceTools;
  prompt: string;
  /** Sent as a user message once the agent ends its turn. */
  endOfSession?: string;
  /** Like a budget: after this many responses the end-of-session text goes out with the next tool results. */
  endAfterResponses?: number;
  stream?: boolean;
  contextManagement?: BetaContextManagementConfig;
  tools?: BetaToolUnion[];
  maxTurns?: number;
}

export interface DriveResult {
  messages: BetaMessageParam[];
  responses: BetaMessage[];
  toolCalls: Array<{
    name: string;
    input: Record<string, unknown>;
    isError: boolean;
    content: string;
  }>;
  finalText: string;
}

/** A minimal agent loop: call the model, run its tool calls, feed results back, until end_turn. */
export async function driveSession(options: DriveOptions): Promise<DriveResult> {
  const messages: BetaMessageParam[] = [{ role: 'user', content: options.prompt }];
  const responses: BetaMessage[] = [];
  const toolCalls: DriveResult['toolCalls'] = [];
  let pendingEnd = options.endOfSession;
  for (let turn = 0; turn < (options.maxTurns ?? 40); turn += 1) {
    const params = {
      model: 'sim',
      max_tokens: 4096,
      system: 'You are a Baton test agent.',
      tools: options.tools ?? SESSION_TOOLS,
      messages,
      ...(options.contextManagement
        ? {
            context_management: options.contextManagement,
            betas: ['context-management-2025-06-27'],
          }
        : {}),
    };
    const response = options.stream
      ? await options.client.beta.messages.stream(params).finalMessage()
      : await options.client.beta.messages.create(params);
    responses.push(response);
    messages.push({
      role: 'assistant',
      content: response.content as BetaAssistantMessageParam['content'],
    });
    if (response.stop_reason === 'tool_use') {
      const results: BetaToolResultBlockParam[] = [];
      for (const block of response.content) {
        if (block.type !== 'tool_use') continue;
        const input = block.input as Record<string, unknown>;
        const outcome =
          block.name === 'memory'
            ? await options.memory.execute(input)
            : block.name === 'bash'
              ? await options.workspace.bash(input)
              : await options.workspace.editor(input);
        toolCalls.push({
          name: block.name,
          input,
          isError: outcome.isError,
          content: outcome.content,
        });
        results.push({
          type: 'tool_result',
          tool_use_id: block.id,
          content: outcome.content,
          ...(outcome.isError ? { is_error: true } : {}),
        });
      }
      if (pendingEnd !== undefined && responses.length >= (options.endAfterResponses ?? Infinity)) {
        messages.push({ role: 'user', content: [...results, { type: 'text', text: pendingEnd }] });
        pendingEnd = undefined;
      } else {
        messages.push({ role: 'user', content: results });
      }
      continue;
    }
    if (pendingEnd !== undefined) {
      messages.push({ role: 'user', content: pendingEnd });
      pendingEnd = undefined;
      continue;
    }
    const last = response.content.at(-1);
    return { messages, responses, toolCalls, finalText: last?.type === 'text' ? last.text : '' };
  }
  throw new Error('The session did not end within maxTurns.');
}
