/**
 * `createMemoryTool`: the memory-tool handler. Validates any input, applies the path policy,
 * runs one command module per command against a `MemoryStore`, and returns the protocol strings
 * of `docs/memory-protocol.md`. Works as `betaMemoryTool(handlers)` in the SDK's tool runner, or
 * directly through `execute(input)`.
 */
import { z } from 'zod';
import type { MemoryToolHandlers } from '@anthropic-ai/sdk/helpers/beta/memory';
import { ToolError } from '@anthropic-ai/sdk/resources/beta/messages';
import { create } from './commands/create.js';
import { deletePath } from './commands/delete.js';
import { insert } from './commands/insert.js';
import { rename } from './commands/rename.js';
import { strReplace } from './commands/str-replace.js';
import { view } from './commands/view.js';
import { createCommandContext, type CommandContext } from './internal/command-context.js';
import { MemoryToolError } from './memory-tool-error.js';
import type { StoreLimits } from './store.js';
import {
  DEFAULT_MEMORY_TOOL_LIMITS,
  MEMORY_COMMAND_NAMES,
  type MemoryCommandName,
  type MemoryQuotaEnforcement,
  type MemoryTool,
  type MemoryToolLimits,
  type MemoryToolOptions,
  type MemoryToolResult,
} from './memory-tool-options.js';

/**
 * Input schema of each command. Fields the SDK types as required but the spec makes optional
 * (`new_str`) are optional here; `null` counts as absent, since models sometimes send it.
 * Unknown fields are ignored.
 */
const COMMAND_SCHEMAS = {
  view: z.object({
    command: z.literal('view'),
    path: z.string(),
    view_range: z
      .array(z.number())
      .nullish()
      .transform((value) => value ?? undefined),
  }),
  create: z.object({
    command: z.literal('create'),
    path: z.string(),
    file_text: z.string(),
  }),
  str_replace: z.object({
    command: z.literal('str_replace'),
    path: z.string(),
    old_str: z.string(),
    new_str: z
      .string()
      .nullish()
      .transform((value) => value ?? undefined),
  }),
  insert: z.object({
    command: z.literal('insert'),
    path: z.string(),
    insert_line: z.number(),
    insert_text: z.string(),
  }),
  delete: z.object({
    command: z.literal('delete'),
    path: z.string(),
  }),
  rename: z.object({
    command: z.literal('rename'),
    old_path: z.string(),
    new_path: z.string(),
  }),
} satisfies Record<MemoryCommandName, z.ZodType>;

/** A validated command. */
export type MemoryCommandInput = {
  [K in MemoryCommandName]: z.output<(typeof COMMAND_SCHEMAS)[K]>;
}[MemoryCommandName];

/**
 * One runner per command. Typed from the command union: a command added to the SDK (and so to
 * `MemoryCommandName`) does not compile until it has a schema and a runner here.
 */
const COMMAND_RUNNERS: {
  [K in MemoryCommandName]: (
    input: z.output<(typeof COMMAND_SCHEMAS)[K]>,
    context: CommandContext,
  ) => Promise<string>;
} = {
  view,
  create,
  str_replace: strReplace,
  insert,
  delete: deletePath,
  rename,
};

/** Creates the memory tool for one store. */
export function createMemoryTool(options: MemoryToolOptions): MemoryTool {
  const limits = resolveLimits(options.limits);
  const hooks = options.hooks ?? {};
  const context = createCommandContext({
    store: options.store,
    limits,
    hooks,
    session: options.session,
    now: options.now ?? Date.now,
    quotaEnforcement: resolveQuotaEnforcement(options.quotaEnforcement),
  });

  async function execute(input: unknown): Promise<MemoryToolResult> {
    let command: MemoryCommandName | undefined;
    try {
      const parsed = parseCommand(input);
      command = parsed.command;
      const content = await runCommand(parsed, context);
      return { content, isError: false };
    } catch (error) {
      if (error instanceof MemoryToolError) {
        if (error.code === 'internal') reportUnexpected(error.cause ?? error, command);
        return { content: error.message, isError: true };
      }
      reportUnexpected(error, command);
      return {
        content: `Error: The memory tool failed unexpectedly${command === undefined ? '' : ` while running ${command}`}.`,
        isError: true,
      };
    }
  }

  function reportUnexpected(error: unknown, command: MemoryCommandName | undefined): void {
    try {
      hooks.onUnexpectedError?.(error, { command, source: 'command' });
    } catch {
      // Reporting must never turn into a thrown error: execute never throws.
    }
  }

  /** The SDK's runner turns a thrown `ToolError` into an `is_error` result with our exact text. */
  async function runForSdk(input: unknown): Promise<string> {
    const result = await execute(input);
    if (result.isError) throw new ToolError(result.content);
    return result.content;
  }

  const handlers: MemoryToolHandlers = {
    view: runForSdk,
    create: runForSdk,
    str_replace: runForSdk,
    insert: runForSdk,
    delete: runForSdk,
    rename: runForSdk,
  };

  return { handlers, execute, limits };
}

function runCommand(input: MemoryCommandInput, context: CommandContext): Promise<string> {
  // The cast pairs each input with its own runner; TypeScript cannot correlate the two unions.
  const runner = COMMAND_RUNNERS[input.command] as (
    input: MemoryCommandInput,
    context: CommandContext,
  ) => Promise<string>;
  return runner(input, context);
}

const EXPECTED_COMMANDS = `Expected one of: ${MEMORY_COMMAND_NAMES.join(', ')}.`;

/** Validates raw tool input into a command, or throws `invalid_input` naming the bad field. */
export function parseCommand(input: unknown): MemoryCommandInput {
  const expected = EXPECTED_COMMANDS;
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw invalidInput(
      `Error: Invalid input for the memory tool: expected an object with a "command" field, got ${describeType(input)}.`,
    );
  }
  const command = (input as { command?: unknown }).command;
  if (command === undefined || command === null) {
    throw invalidInput(
      `Error: Invalid input for the memory tool: the field "command" is missing. ${expected}`,
    );
  }
  if (typeof command !== 'string') {
    throw invalidInput(
      `Error: Invalid input for the memory tool: the field "command" must be a string, got ${describeType(command)}. ${expected}`,
    );
  }
  if (!isCommandName(command)) {
    throw invalidInput(`Error: Unknown memory command "${command.slice(0, 100)}". ${expected}`);
  }
  const result = COMMAND_SCHEMAS[command].safeParse(input);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => describeIssue(issue, input));
  return throwInvalid(
    `Error: Invalid input for memory command "${command}": ${problems.join('; ')}.`,
  );
}

function throwInvalid(message: string): never {
  throw invalidInput(message);
}

function describeIssue(issue: z.core.$ZodIssue, input: object): string {
  const field = issue.path.map(String).join('.');
  const value = issue.path.reduce<unknown>(
    (current, key) =>
      typeof current === 'object' && current !== null
        ? (current as Record<PropertyKey, unknown>)[key as PropertyKey]
        : undefined,
    input,
  );
  if (issue.code === 'invalid_type') {
    const wanted = issue.expected === 'array' ? 'an array' : `a ${issue.expected}`;
    if (value === undefined) return `the field "${field}" is missing (expected ${wanted})`;
    return `the field "${field}" must be ${wanted}, got ${describeType(value)}`;
  }
  return `the field "${field}" is invalid (${issue.message})`;
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return `a ${typeof value}`;
}

function isCommandName(value: string): value is MemoryCommandName {
  return (MEMORY_COMMAND_NAMES as readonly string[]).includes(value);
}

function invalidInput(message: string): MemoryToolError {
  return new MemoryToolError(message, { code: 'invalid_input' });
}

/** Checks `quotaEnforcement` at construction, so a typo cannot silently turn quotas off. */
function resolveQuotaEnforcement(value: unknown): MemoryQuotaEnforcement {
  if (value === undefined) return 'handler';
  if (value === 'handler' || value === 'store') return value;
  throw new TypeError(
    `Memory tool option quotaEnforcement must be 'handler' or 'store', got ${String(value)}.`,
  );
}

/**
 * The `StoreLimits` that make a store enforce the memory tool's store-wide limits itself: create
 * the store with these and the tool with `quotaEnforcement: 'store'`. `Infinity` becomes
 * unlimited (`undefined`).
 */
export function memoryStoreLimits(limits: Partial<MemoryToolLimits> = {}): StoreLimits {
  const resolved = resolveLimits(limits);
  const result: StoreLimits = {};
  for (const key of ['maxFileBytes', 'maxTotalBytes', 'maxFiles'] as const) {
    if (Number.isFinite(resolved[key])) result[key] = resolved[key];
  }
  return result;
}

/** Merges and checks limits, so a typo cannot silently disable one. */
function resolveLimits(overrides: Partial<MemoryToolLimits> | undefined): MemoryToolLimits {
  const limits: MemoryToolLimits = { ...DEFAULT_MEMORY_TOOL_LIMITS };
  for (const key of Object.keys(DEFAULT_MEMORY_TOOL_LIMITS) as Array<keyof MemoryToolLimits>) {
    const value = overrides?.[key];
    if (value === undefined) continue;
    const valid = value === Number.POSITIVE_INFINITY || (Number.isSafeInteger(value) && value > 0);
    if (!valid) {
      throw new TypeError(
        `Memory tool limit ${key} must be a positive integer or Infinity, got ${String(value)}.`,
      );
    }
    limits[key] = value;
  }
  if (limits.maxViewChars < 1_000) {
    throw new TypeError(
      `Memory tool limit maxViewChars must be at least 1000, got ${limits.maxViewChars}.`,
    );
  }
  return limits;
}

export { DEFAULT_MEMORY_TOOL_LIMITS, MEMORY_COMMAND_NAMES } from './memory-tool-options.js';
export type {
  MemoryChange,
  MemoryCommandName,
  MemoryQuotaEnforcement,
  MemoryTool,
  MemoryToolErrorInfo,
  MemoryToolHooks,
  MemoryToolLimits,
  MemoryToolOptions,
  MemoryToolResult,
  MemoryWrite,
} from './memory-tool-options.js';
export { MemoryToolError, isMemoryToolError } from './memory-tool-error.js';
export type { MemoryToolErrorCode, MemoryToolErrorOptions } from './memory-tool-error.js';
export { parseMemoryPath, toVirtualPath, MEMORY_ROOT } from './path-policy.js';
export type { PathPolicyOptions } from './path-policy.js';
