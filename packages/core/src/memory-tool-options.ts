/**
 * Public types of the memory tool: command names, limits, hooks, options, results. Kept apart from
 * `memory-tool.ts` so the per-command modules can use them without importing the factory.
 */
import type { BetaMemoryTool20250818Command } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import type { MemoryStore } from './store.js';

/**
 * The memory tool's commands, taken from the SDK's command union: when the SDK adds a command,
 * every `Record<MemoryCommandName, ...>` in this package stops compiling until it is handled.
 */
export type MemoryCommandName = BetaMemoryTool20250818Command['command'];

/** Every command name, in the order the docs list them. */
export const MEMORY_COMMAND_NAMES = [
  'view',
  'create',
  'str_replace',
  'insert',
  'delete',
  'rename',
] as const satisfies readonly MemoryCommandName[];

/** Limits the handler enforces. Exceeding one is an `is_error` tool result and changes nothing. */
export interface MemoryToolLimits {
  /** Largest file in UTF-8 bytes after a create, str_replace or insert. Default 1,048,576 (1 MiB). */
  maxFileBytes: number;
  /** Largest total of all file sizes in the store, in bytes. Default 52,428,800 (50 MiB). */
  maxTotalBytes: number;
  /** Most files in the store. Default 1,000. */
  maxFiles: number;
  /** Longest `view` result in characters; longer file views are cut with a paging hint. Default 16,000. */
  maxViewChars: number;
  /** Longest accepted path, in characters. Default 1,024. */
  maxPathLength: number;
  /** Longest accepted file or directory name, in UTF-8 bytes. Default 255. */
  maxNameLength: number;
}

/** Defaults of `MemoryToolLimits`. */
export const DEFAULT_MEMORY_TOOL_LIMITS: Readonly<MemoryToolLimits> = Object.freeze({
  maxFileBytes: 1_048_576,
  maxTotalBytes: 52_428_800,
  maxFiles: 1_000,
  maxViewChars: 16_000,
  maxPathLength: 1_024,
  maxNameLength: 255,
});

/** A write about to happen, shown to `hooks.beforeWrite`. */
export interface MemoryWrite {
  /** `create`, `str_replace` or `insert`. */
  command: MemoryCommandName;
  /** Canonical virtual path, e.g. `/memories/features.json`. */
  path: string;
  /** Current content; `null` for `create`. */
  before: string | null;
  /** The content about to be stored. */
  after: string;
}

/** A mutation that happened, reported to `hooks.afterChange`. */
export interface MemoryChange {
  /** `create`, `str_replace`, `insert`, `delete` or `rename`. */
  command: MemoryCommandName;
  /** Canonical virtual path (for `rename`: the old path). */
  path: string;
  /** `rename` only: the canonical new path. */
  newPath?: string;
  /** Size in bytes after the change (0 for `delete`, and for `rename` of a directory). */
  bytes: number;
  /** When the change completed, epoch milliseconds. */
  at: number;
  /** `MemoryToolOptions.session`, when set. */
  session?: string | undefined;
}

/** Where an error reported to `hooks.onHookError` / `hooks.onUnexpectedError` came from. */
export interface MemoryToolErrorInfo {
  /** The command that was running. */
  command: MemoryCommandName | undefined;
  /** `afterChange` for a failing hook, `command` for an unexpected failure while running a command. */
  source: 'afterChange' | 'command';
}

/** Hooks around writes. */
export interface MemoryToolHooks {
  /**
   * Runs before every create, str_replace and insert, after the new content is computed and
   * before it is stored. Synchronous, because it may run inside a store's retry loop (it can run
   * more than once for one command; keep it a pure function of its input). Return a string to
   * store that instead (e.g. redaction), `undefined` to keep the content; throw
   * `new MemoryToolError(message)` to refuse: the message goes to the model verbatim as an
   * `is_error` tool result and nothing is written. Any other error thrown here also refuses the
   * write, with a generic message (the error goes to `onUnexpectedError`).
   */
  beforeWrite?: (write: MemoryWrite) => string | undefined;
  /**
   * Runs after every successful mutation, before the tool result is returned. Errors (and
   * rejections) are caught and passed to `onHookError`; the tool result is unaffected.
   */
  afterChange?: ((change: MemoryChange) => void | Promise<void>) | undefined;
  /** Receives errors thrown by `afterChange`. Default: ignore them. */
  onHookError?: (error: unknown, info: MemoryToolErrorInfo) => void;
  /**
   * Receives unexpected errors (bugs, store failures) with their stack, which the model never
   * sees. Default: ignore them.
   */
  onUnexpectedError?: (error: unknown, info: MemoryToolErrorInfo) => void;
}

/** Options of `createMemoryTool`. */
export interface MemoryToolOptions {
  /** Where the memory lives. */
  store: MemoryStore;
  /** Overrides of `DEFAULT_MEMORY_TOOL_LIMITS`. */
  limits?: Partial<MemoryToolLimits>;
  /** Write hooks. Default: none. */
  hooks?: MemoryToolHooks;
  /** Session or actor id passed to stores as `MutationContext.session` and to `afterChange`. */
  session?: string;
  /** Clock for `MemoryChange.at`. Default `Date.now`. */
  now?: () => number;
  /**
   * Who enforces `maxTotalBytes` and `maxFiles`. Default `'handler'`.
   *
   * - `'handler'`: before every create, str_replace and insert the handler calls `store.usage()`
   *   and refuses a write that would break a limit. Works with any store, costs one extra store
   *   round trip per write, and is not atomic (two writers racing near a limit can overshoot it).
   * - `'store'`: the store was created with the same limits (`memoryStoreLimits(limits)`) and
   *   enforces them atomically; the handler makes no `usage()` call and turns the store's
   *   `quota_exceeded` into a tool error naming the limit. With a store created without limits,
   *   this mode means no store-wide quota at all: that is why it is not the default (the handler
   *   cannot see a store's limits).
   *
   * `maxFileBytes` is always checked by the handler too (it needs no store call).
   */
  quotaEnforcement?: MemoryQuotaEnforcement;
}

/** See `MemoryToolOptions.quotaEnforcement`. */
export type MemoryQuotaEnforcement = 'handler' | 'store';

/** What `execute` returns: the tool result content and whether it is an error. */
export interface MemoryToolResult {
  /** Exactly what the model should read. */
  content: string;
  /** True for an `is_error` tool result. */
  isError: boolean;
}

/** The memory tool bound to a store. */
export interface MemoryTool {
  /**
   * One function per command, for `betaMemoryTool(handlers)` and the SDK's tool runner. Every
   * input is validated like `execute`'s; an error result is thrown as the SDK's `ToolError`, so
   * the runner sends our message unchanged with `is_error: true`.
   */
  handlers: MemoryToolHandlers;
  /** Validates and runs any input. Never throws. */
  execute(input: unknown): Promise<MemoryToolResult>;
  /** The limits in force (defaults merged with `options.limits`). */
  limits: Readonly<MemoryToolLimits>;
}
