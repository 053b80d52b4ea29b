import { redactSecrets, redactThenCut } from '@baton/core';
import type {
  BetaImageBlockParam,
  BetaToolUnion,
} from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SandboxSetup } from '@baton/workspace';
import type { CommandPolicy } from '../internal/command-policy.js';

/** What a tool call returns to the model. */
export interface ToolOutcome {
  content: string;
  isError: boolean;
  /** Images sent after the text, as image blocks of the tool result (an MCP tool's screenshot). */
  images?: BetaImageBlockParam[] | undefined;
  /**
   * The sandbox limit that stopped the call or failed it (the line the model was told, naming the
   * setting: `commandTimeoutMs`, `workspaceMb`, `workspaceFiles`); carried on the `tool-call` event.
   */
  limit?: string | undefined;
}

/** One tool the session offers: its API definition and how to run it. */
export interface SessionTool {
  /** Tool name as the model calls it. */
  name: string;
  /** The definition sent in `tools` (SDK tool types). */
  definition: BetaToolUnion;
  /** Which calls must not run concurrently: calls with the same lane run one after another. */
  lane: string;
  /** Run one call. Never throws: failures are `isError` outcomes. */
  execute(input: unknown, signal?: AbortSignal): Promise<ToolOutcome>;
  /**
   * Longest one call may take before the toolbox stops waiting, tells the model and goes on
   * (the call's signal is aborted). Default: the toolbox's `DEFAULT_TOOL_TIME_LIMIT_MS`.
   */
  timeLimitMs?: number;
  /** A short one-line summary of a call's input, for events and logs. */
  summarize(input: unknown): string;
  /** Ends what the tool keeps running (the bash tool's processes) when the session ends. */
  dispose?(): Promise<void>;
}

/** Options of the workspace tools (bash and text editor). */
export interface WorkspaceToolsOptions {
  /**
   * Where bash commands run: the OS sandbox with a policy (`@baton/workspace`; its
   * `limits.commandTimeoutMs` is the per-command timeout), or `{ mode: 'off' }` for an operator's
   * explicit opt-out. Default: the sandbox with `DEFAULT_SANDBOX_POLICY`.
   */
  sandbox?: SandboxSetup;
  /** Most characters of command output returned (head and tail are kept). Default 30_000. */
  maxOutputChars?: number;
  /** Which commands bash runs. Default: `DEFAULT_DENIED_COMMANDS` refused, everything else allowed. */
  commands?: CommandPolicy;
  /** Extra environment variables for commands (the host environment is NOT passed through). Default none. */
  env?: Record<string, string>;
  /** Most characters one text-editor view returns. Default 16_000. */
  maxViewChars?: number;
  /**
   * Largest file the text editor reads or writes, in bytes (a larger file is refused with its size
   * and a hint to read a part of it with bash). Default 1_048_576.
   */
  maxFileBytes?: number;
  /** Most entries one text-editor directory view lists (reading stops there). Default 1_000. */
  maxListEntries?: number;
}

/** A one-line summary of `text`, redacted and then cut to `max` characters (never the reverse). */
export function shorten(text: string, max = 80): string {
  return redactThenCut(redactSecrets(text).text.replace(/\s+/g, ' ').trim(), max);
}

/** Read a string field of an unknown tool input. */
export function stringField(input: unknown, key: string): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const value = (input as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
