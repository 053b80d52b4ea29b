import type {
  BetaToolResultBlockParam,
  BetaToolUnion,
  BetaToolUseBlock,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SessionTool, ToolOutcome } from '../tools/types.js';
import type { EventBody } from './events.js';

/** The session's tools: their definitions and how one turn's tool calls run. */
export interface Toolbox {
  /** The `tools` of every request, in a fixed order (part of the cached prefix). */
  readonly definitions: BetaToolUnion[];
  /**
   * Adds tools after the built-in ones (a session's MCP tools), before the first request: the list
   * stays fixed for the rest of the session. `dispose` also runs `onDispose`.
   */
  add(tools: readonly SessionTool[], onDispose?: () => Promise<void>): void;
  /** Runs one turn's calls and returns their results in the order of the tool_use blocks. */
  run(
    blocks: readonly BetaToolUseBlock[],
    turn: number,
    signal: AbortSignal,
  ): Promise<BetaToolResultBlockParam[]>;
  /** Ends what the tools keep running (every process of the session's commands). Never throws. */
  dispose(): Promise<void>;
}

/** What runs around tool calls (the session's checkpoints). */
export interface ToolboxHooks {
  /** Before one call runs. */
  beforeCall?(block: BetaToolUseBlock): Promise<void>;
  /** After every call of a turn ran. */
  afterCalls?(blocks: readonly BetaToolUseBlock[]): Promise<void>;
}

/**
 * Longest one tool call may take unless the tool says otherwise (bash: its command timeout plus
 * time to stop the processes). A call that hangs (a read the kernel never answers, a store that
 * stopped responding) must not hang the session: the model is told and the session goes on.
 */
const DEFAULT_TOOL_TIME_LIMIT_MS = 120_000;

/** What the model reads when a call ran out of time. */
export function toolTimeLimitMessage(limitMs: number): string {
  return `Error: the tool call did not finish within ${limitMs < 1000 ? `${limitMs} ms` : `${Math.round(limitMs / 1000)} s`} and was stopped; nothing more of it will happen. The session goes on: try a smaller step.`;
}

export function createToolbox(
  tools: readonly SessionTool[],
  emit: (body: EventBody) => Promise<void>,
  hooks: ToolboxHooks = {},
): Toolbox {
  const all = [...tools];
  const byName = new Map(all.map((tool) => [tool.name, tool]));
  let names = all.map((tool) => tool.name).join(', ');
  const definitions = all.map((tool) => tool.definition);
  const disposers: Array<() => Promise<void>> = [];

  async function execute(
    tool: SessionTool | undefined,
    block: BetaToolUseBlock,
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    if (tool === undefined) {
      return {
        content: `Error: unknown tool ${JSON.stringify(block.name)}. Available: ${names}.`,
        isError: true,
      };
    }
    const limitMs = tool.timeLimitMs ?? DEFAULT_TOOL_TIME_LIMIT_MS;
    const stop = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<ToolOutcome>((resolve) => {
      timer = setTimeout(() => {
        stop.abort(new Error('tool time limit'));
        resolve({ content: toolTimeLimitMessage(limitMs), isError: true });
      }, limitMs);
    });
    try {
      return await Promise.race([
        tool.execute(block.input, AbortSignal.any([signal, stop.signal])),
        expired,
      ]);
    } catch {
      return { content: 'Error: the tool failed unexpectedly.', isError: true };
    } finally {
      clearTimeout(timer);
    }
  }

  async function runOne(
    block: BetaToolUseBlock,
    turn: number,
    signal: AbortSignal,
  ): Promise<BetaToolResultBlockParam> {
    await hooks.beforeCall?.(block);
    const started = Date.now();
    const tool = byName.get(block.name);
    const outcome = await execute(tool, block, signal);
    await emit({
      type: 'tool-call',
      turn,
      tool: block.name,
      toolUseId: block.id,
      summary: tool?.summarize(block.input) ?? block.name,
      isError: outcome.isError,
      limit: outcome.limit,
      durationMs: Date.now() - started,
    });
    return {
      type: 'tool_result',
      tool_use_id: block.id,
      content:
        outcome.images === undefined || outcome.images.length === 0
          ? outcome.content
          : [{ type: 'text', text: outcome.content }, ...outcome.images],
      ...(outcome.isError ? { is_error: true } : {}),
    };
  }

  return {
    definitions,
    add(added, onDispose) {
      for (const tool of added) {
        if (byName.has(tool.name)) continue;
        all.push(tool);
        byName.set(tool.name, tool);
        definitions.push(tool.definition);
      }
      names = all.map((tool) => tool.name).join(', ');
      if (onDispose !== undefined) disposers.push(onDispose);
    },
    /**
     * Calls in different lanes (memory vs workspace) run concurrently, calls in one lane run in
     * order (a file the model creates is there when its next command runs).
     */
    async run(blocks, turn, signal) {
      const lanes = new Map<string, Promise<unknown>>();
      const results = await Promise.all(
        blocks.map((block) => {
          const lane = byName.get(block.name)?.lane ?? 'other';
          const previous = lanes.get(lane) ?? Promise.resolve();
          const run = previous.then(() => runOne(block, turn, signal));
          lanes.set(
            lane,
            run.catch(() => undefined),
          );
          return run;
        }),
      );
      await hooks.afterCalls?.(blocks);
      return results;
    },
    async dispose() {
      await Promise.all([
        ...all.map(async (tool) => {
          try {
            await tool.dispose?.();
          } catch {
            // A tool that cannot clean up must not stop the others from doing so.
          }
        }),
        ...disposers.map((dispose) => dispose().catch(() => undefined)),
      ]);
    },
  };
}
