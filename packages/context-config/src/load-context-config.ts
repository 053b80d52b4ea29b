import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type ContextConfigErrorCode,
  ContextConfigError,
  type ContextConfigIssue,
} from './errors.js';
import { validateContextInput } from './internal/validate.js';
import { buildResolved, checkContradictions, mergeInputs } from './internal/resolve.js';
import { PRESET_NAMES } from './internal/schema.js';
import type { ContextConfigInput, ResolvedContextConfig } from './types.js';

/** The project config file, looked up in `cwd`; its `context` key holds a `ContextConfigInput`. */
export const CONFIG_FILE_NAME = 'baton.config.json';

/** Environment variables read by `loadContextConfig` (an empty value counts as unset). */
export const CONTEXT_ENV_VARS = {
  /** `coding` | `search-heavy` | `long-horizon` | `off`. */
  preset: 'BATON_CONTEXT_PRESET',
  /** `off` (or `false`) turns tool-result clearing off; `on` (or `true`) turns it on. */
  clearToolUses: 'BATON_CONTEXT_CLEAR_TOOL_USES',
  /** clearToolUses.trigger = { type: 'input_tokens', value }. */
  triggerTokens: 'BATON_CONTEXT_TRIGGER_TOKENS',
  /** clearToolUses.trigger = { type: 'tool_uses', value }. */
  triggerToolUses: 'BATON_CONTEXT_TRIGGER_TOOL_USES',
  /** clearToolUses.keep = { type: 'tool_uses', value }. */
  keepToolUses: 'BATON_CONTEXT_KEEP_TOOL_USES',
  /** clearToolUses.clear_at_least = { type: 'input_tokens', value } (`0` = no minimum). */
  clearAtLeastTokens: 'BATON_CONTEXT_CLEAR_AT_LEAST_TOKENS',
  /** clearToolUses.exclude_tools, comma separated. */
  excludeTools: 'BATON_CONTEXT_EXCLUDE_TOOLS',
  /** clearToolUses.clear_tool_inputs: `true`, `false`, or comma-separated tool names. */
  clearToolInputs: 'BATON_CONTEXT_CLEAR_TOOL_INPUTS',
  /** clearToolUses.clearMemoryTool: `true` | `false`. */
  clearMemoryTool: 'BATON_CONTEXT_CLEAR_MEMORY_TOOL',
  /** clearThinking: `off`, `all`, or a number of turns to keep. */
  thinkingKeep: 'BATON_CONTEXT_THINKING_KEEP',
  /** compaction: `off` or `on`. */
  compaction: 'BATON_CONTEXT_COMPACTION',
  /** compaction.trigger = { type: 'input_tokens', value } (turns compaction on). */
  compactionTriggerTokens: 'BATON_CONTEXT_COMPACTION_TRIGGER_TOKENS',
  /** promptCache: `off` (no cache breakpoints) or `on`. */
  promptCache: 'BATON_CONTEXT_PROMPT_CACHE',
  /** promptCache.prefixTtl: `5m` or `1h` (turns prompt caching on). */
  cacheTtl: 'BATON_CONTEXT_CACHE_TTL',
} as const;

/**
 * The `BATON_CONTEXT_*` variables set in `env` (an empty or blank value counts as unset), in
 * `CONTEXT_ENV_VARS` order: what a process that runs a project's stored context config (a worker,
 * `baton run` continuing a project) names in the one line that says they are not applied.
 */
export function contextVariablesSet(env: NodeJS.ProcessEnv = process.env): string[] {
  return Object.values(CONTEXT_ENV_VARS).filter((name) => (env[name]?.trim() ?? '') !== '');
}

export interface LoadContextConfigOptions {
  /** Project root holding `baton.config.json` (a missing file is fine). */
  cwd: string;
  /** Environment to read `BATON_CONTEXT_*` from. Default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Highest-precedence layer, e.g. from CLI flags. Default: none. */
  override?: ContextConfigInput;
}

interface Layer {
  source: string;
  prefix: PropertyKey[];
  code: ContextConfigErrorCode;
  value: unknown;
}

/**
 * Loads the context config of a project: defaults (preset `coding`) < `baton.config.json`
 * (`context` key) < `BATON_CONTEXT_*` env vars < `override`. Every layer is validated on its
 * own, so a problem is reported where it is written (`context.clearToolUses.keep.value` in the
 * file, `BATON_CONTEXT_KEEP_TOOL_USES` in the env); rules that only break once the layers are
 * combined are reported with source `merged`. All problems come in one `ContextConfigError`.
 */
export async function loadContextConfig(
  options: LoadContextConfigOptions,
): Promise<ResolvedContextConfig> {
  return buildResolved(await loadContextConfigInput(options));
}

/**
 * The layers `loadContextConfig` reads, merged and validated but not resolved: the config a
 * project stores (`@baton/projects` keeps it on the project record, and every session resolves
 * it with `defineContextConfig`). Same layers, precedence and errors as `loadContextConfig`.
 */
export async function loadContextConfigInput(
  options: LoadContextConfigOptions,
): Promise<ContextConfigInput> {
  const layers: Layer[] = [];
  const issues: ContextConfigIssue[] = [];
  let firstCode: ContextConfigErrorCode | undefined;
  const fail = (code: ContextConfigErrorCode, found: ContextConfigIssue[]) => {
    if (found.length === 0) return;
    firstCode ??= code;
    issues.push(...found);
  };

  const file = await readConfigFile(options.cwd);
  if (file.kind === 'error') fail(file.code, [file.issue]);
  else if (file.kind === 'found' && file.context !== undefined) {
    layers.push({
      source: CONFIG_FILE_NAME,
      prefix: ['context'],
      code: 'invalid_file',
      value: file.context,
    });
  }

  const fromEnv = readEnv(options.env ?? process.env);
  fail('invalid_env', fromEnv.issues);
  if (fromEnv.issues.length === 0) {
    layers.push({ source: 'env', prefix: [], code: 'invalid_env', value: fromEnv.input });
  }
  if (options.override !== undefined) {
    layers.push({
      source: 'override',
      prefix: [],
      code: 'invalid_config',
      value: options.override,
    });
  }

  let merged: ContextConfigInput = {};
  const validLayers: Array<{ layer: Layer; input: ContextConfigInput }> = [];
  for (const layer of layers) {
    // Cross-field rules wait for the merge: a layer may set a trigger whose matching keep
    // comes from another layer.
    const validated = validateContextInput(layer.value, layer.prefix, layer.source, {
      crossField: false,
    });
    fail(layer.code, validated.issues);
    validLayers.push({ layer, input: validated.input });
    merged = mergeInputs(merged, validated.input);
  }
  if (issues.length === 0) {
    for (const issue of checkContradictions(merged, [], 'merged')) {
      const origin = originOf(issue.path, validLayers);
      fail(origin?.code ?? 'invalid_config', [
        origin === undefined
          ? issue
          : {
              ...issue,
              source: origin.source,
              path:
                origin.source === 'env'
                  ? envPath(issue.path, merged)
                  : joinPath(origin.prefix, issue.path),
            },
      ]);
    }
  }
  if (issues.length > 0) throw new ContextConfigError(firstCode ?? 'invalid_config', issues);
  return merged;
}

/** The layer that last wrote `group.field` of a merged path, so the error points into it. */
function originOf(
  path: string,
  layers: ReadonlyArray<{ layer: Layer; input: ContextConfigInput }>,
): Layer | undefined {
  const [group, field] = path.split(/[.[]/);
  if (group === undefined || field === undefined) return undefined;
  for (let index = layers.length - 1; index >= 0; index -= 1) {
    const entry = layers[index];
    if (entry === undefined) continue;
    const value = (entry.input as Record<string, unknown>)[group];
    if (value === false) return undefined;
    if (typeof value === 'object' && value !== null && field in value) return entry.layer;
  }
  return undefined;
}

/** Names the variable behind a merged path, e.g. `BATON_CONTEXT_KEEP_TOOL_USES (clearToolUses.keep.value)`. */
function envPath(path: string, merged: ContextConfigInput): string {
  const [group, field] = path.split(/[.[]/);
  const tools = merged.clearToolUses === false ? undefined : merged.clearToolUses;
  const names: Record<string, string> = {
    'clearToolUses.trigger':
      tools?.trigger?.type === 'tool_uses'
        ? CONTEXT_ENV_VARS.triggerToolUses
        : CONTEXT_ENV_VARS.triggerTokens,
    'clearToolUses.keep': CONTEXT_ENV_VARS.keepToolUses,
    'clearToolUses.exclude_tools': CONTEXT_ENV_VARS.excludeTools,
    'clearToolUses.clear_tool_inputs': CONTEXT_ENV_VARS.clearToolInputs,
    'clearToolUses.clearMemoryTool': CONTEXT_ENV_VARS.clearMemoryTool,
    'compaction.trigger': CONTEXT_ENV_VARS.compactionTriggerTokens,
  };
  const name = names[`${group ?? ''}.${field ?? ''}`];
  return name === undefined ? path : `${name} (${path})`;
}

function joinPath(prefix: readonly PropertyKey[], path: string): string {
  return prefix.length === 0 ? path : `${prefix.map(String).join('.')}.${path}`;
}

type FileResult =
  | { kind: 'missing' }
  | { kind: 'found'; context: unknown }
  | { kind: 'error'; code: ContextConfigErrorCode; issue: ContextConfigIssue };

async function readConfigFile(cwd: string): Promise<FileResult> {
  let text: string;
  try {
    text = await readFile(join(cwd, CONFIG_FILE_NAME), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return {
      kind: 'error',
      code: 'unreadable_file',
      issue: {
        path: '',
        message: `could not be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
        source: CONFIG_FILE_NAME,
      },
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      kind: 'error',
      code: 'invalid_file',
      issue: {
        path: '',
        message: `is not valid JSON: ${(error as Error).message}`,
        source: CONFIG_FILE_NAME,
      },
    };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return {
      kind: 'error',
      code: 'invalid_file',
      issue: { path: '', message: 'must be a JSON object', source: CONFIG_FILE_NAME },
    };
  }
  // Other top-level keys belong to other parts of Baton; only `context` is ours.
  return { kind: 'found', context: (json as Record<string, unknown>).context };
}

function readEnv(env: NodeJS.ProcessEnv): {
  input: ContextConfigInput;
  issues: ContextConfigIssue[];
} {
  const issues: ContextConfigIssue[] = [];
  const input: Record<string, unknown> = {};
  const tools: Record<string, unknown> = {};
  const get = (name: string): string | undefined => {
    const value = env[name]?.trim();
    return value === undefined || value === '' ? undefined : value;
  };
  const problem = (name: string, message: string) =>
    issues.push({ path: name, message, source: 'env' });
  const integer = (name: string, minimum: number): number | undefined => {
    const raw = get(name);
    if (raw === undefined) return undefined;
    if (!/^\d+$/.test(raw) || Number(raw) < minimum) {
      problem(name, `must be a whole number >= ${minimum} (got "${raw}")`);
      return undefined;
    }
    return Number(raw);
  };
  const toggle = (name: string): boolean | undefined => {
    const raw = get(name)?.toLowerCase();
    if (raw === undefined) return undefined;
    if (raw === 'on' || raw === 'true' || raw === '1') return true;
    if (raw === 'off' || raw === 'false' || raw === '0') return false;
    problem(name, `must be on/off or true/false (got "${raw}")`);
    return undefined;
  };
  const list = (name: string): string[] | undefined =>
    get(name)
      ?.split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');

  const preset = get(CONTEXT_ENV_VARS.preset);
  if (preset !== undefined) {
    if ((PRESET_NAMES as readonly string[]).includes(preset)) input.preset = preset;
    else
      problem(
        CONTEXT_ENV_VARS.preset,
        `must be one of: ${PRESET_NAMES.join(', ')} (got "${preset}")`,
      );
  }

  const triggerTokens = integer(CONTEXT_ENV_VARS.triggerTokens, 1);
  const triggerToolUses = integer(CONTEXT_ENV_VARS.triggerToolUses, 1);
  if (triggerTokens !== undefined && triggerToolUses !== undefined) {
    problem(
      CONTEXT_ENV_VARS.triggerToolUses,
      `cannot be set together with ${CONTEXT_ENV_VARS.triggerTokens}; the trigger is one or the other`,
    );
  } else if (triggerTokens !== undefined)
    tools.trigger = { type: 'input_tokens', value: triggerTokens };
  else if (triggerToolUses !== undefined)
    tools.trigger = { type: 'tool_uses', value: triggerToolUses };
  const keep = integer(CONTEXT_ENV_VARS.keepToolUses, 0);
  if (keep !== undefined) tools.keep = { type: 'tool_uses', value: keep };
  const clearAtLeast = integer(CONTEXT_ENV_VARS.clearAtLeastTokens, 0);
  if (clearAtLeast !== undefined) {
    tools.clear_at_least =
      clearAtLeast === 0 ? null : { type: 'input_tokens', value: clearAtLeast };
  }
  const exclude = list(CONTEXT_ENV_VARS.excludeTools);
  if (exclude !== undefined) tools.exclude_tools = exclude;
  const inputsRaw = get(CONTEXT_ENV_VARS.clearToolInputs);
  if (inputsRaw !== undefined) {
    const lowered = inputsRaw.toLowerCase();
    tools.clear_tool_inputs =
      lowered === 'true'
        ? true
        : lowered === 'false'
          ? false
          : list(CONTEXT_ENV_VARS.clearToolInputs);
  }
  const clearMemory = toggle(CONTEXT_ENV_VARS.clearMemoryTool);
  if (clearMemory !== undefined) tools.clearMemoryTool = clearMemory;

  const clearToolUses = toggle(CONTEXT_ENV_VARS.clearToolUses);
  if (clearToolUses === false) {
    if (Object.keys(tools).length > 0) {
      problem(
        CONTEXT_ENV_VARS.clearToolUses,
        'is off, but other BATON_CONTEXT_* clearing variables are set',
      );
    }
    input.clearToolUses = false;
  } else if (clearToolUses === true || Object.keys(tools).length > 0) {
    input.clearToolUses = tools;
  }

  const thinking = get(CONTEXT_ENV_VARS.thinkingKeep)?.toLowerCase();
  if (thinking !== undefined) {
    if (thinking === 'off' || thinking === 'false') input.clearThinking = false;
    else if (thinking === 'all') input.clearThinking = { keep: 'all' };
    else {
      const turns = integer(CONTEXT_ENV_VARS.thinkingKeep, 1);
      if (turns !== undefined)
        input.clearThinking = { keep: { type: 'thinking_turns', value: turns } };
    }
  }

  const compaction = toggle(CONTEXT_ENV_VARS.compaction);
  const compactionTrigger = integer(CONTEXT_ENV_VARS.compactionTriggerTokens, 1);
  if (compaction === false) {
    if (compactionTrigger !== undefined) {
      problem(
        CONTEXT_ENV_VARS.compaction,
        `is off, but ${CONTEXT_ENV_VARS.compactionTriggerTokens} is set`,
      );
    }
    input.compaction = false;
  } else if (compaction === true || compactionTrigger !== undefined) {
    // Absent, not undefined: mergeInputs spreads this over the lower layers' trigger.
    input.compaction =
      compactionTrigger === undefined
        ? {}
        : { trigger: { type: 'input_tokens', value: compactionTrigger } };
  }
  const promptCache = toggle(CONTEXT_ENV_VARS.promptCache);
  const ttl = get(CONTEXT_ENV_VARS.cacheTtl)?.toLowerCase();
  if (ttl !== undefined && ttl !== '5m' && ttl !== '1h') {
    problem(CONTEXT_ENV_VARS.cacheTtl, `must be 5m or 1h (got "${ttl}")`);
  } else if (promptCache === false) {
    if (ttl !== undefined) {
      problem(CONTEXT_ENV_VARS.promptCache, `is off, but ${CONTEXT_ENV_VARS.cacheTtl} is set`);
    }
    input.promptCache = false;
  } else if (promptCache === true || ttl !== undefined) {
    // Absent, not undefined: mergeInputs spreads this over the lower layers' prefixTtl.
    input.promptCache = ttl === undefined ? {} : { prefixTtl: ttl };
  }
  return { input: input as ContextConfigInput, issues };
}
