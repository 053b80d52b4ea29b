import {
  createMemoryTool,
  parseMemoryPath,
  redactSecrets,
  type MemoryChange,
  type MemoryQuotaEnforcement,
  type MemoryStore,
} from '@baton/core';
import {
  type FlipGate,
  composeBeforeWrite,
  createChecklistGuard,
  createRedactionHook,
} from '../checklist-guard.js';
import type { Feature } from '../features.js';
import { CHECKLIST_RULE, checkChecklistWrite } from '../checklist-rules.js';
import { FEATURES_PATH, FEATURES_STORE_PATH } from '../features.js';
import { PROGRESS_ARCHIVE_RULE, isProgressArchivePath } from '../progress-log.js';
import { shorten, stringField, type SessionTool, type ToolOutcome } from './types.js';

/** Options of `createSessionMemoryTool`. */
export interface SessionMemoryToolOptions {
  /** The project's memory. */
  store: MemoryStore;
  /** Session id recorded with every change. */
  session: string;
  /** Allow appending features (init session). Default false. */
  allowFeatureAdditions?: boolean;
  /** Called after every successful mutation. */
  onChange?: (change: MemoryChange) => void | Promise<void>;
  /**
   * `'store'` when `store` was created with `memoryStoreLimits()` and enforces the quotas
   * atomically (no `usage()` call per write); default `'handler'`, safe with any store.
   */
  quotaEnforcement?: MemoryQuotaEnforcement | undefined;
  /**
   * Verifies flips of `passes` to true before they are written (the session's feature checks):
   * a refusal's message goes to the model as the tool error. Default: none (flips are accepted).
   */
  verifyFlips?:
    | ((
        ids: readonly string[],
        after: readonly Feature[],
      ) => Promise<
        { accepted: true; note: string; commit(): void } | { accepted: false; message: string }
      >)
    | undefined;
}

function storePathOf(virtualPath: string | undefined): string | undefined {
  if (virtualPath === undefined) return undefined;
  try {
    return parseMemoryPath(virtualPath);
  } catch {
    return undefined; // The handler reports invalid paths with the protocol's own message.
  }
}

/** True if deleting or moving `storePath` would take features.json with it. */
function takesChecklist(storePath: string | undefined): boolean {
  return storePath !== undefined && (storePath === FEATURES_STORE_PATH || storePath === '');
}

/**
 * The `memory` tool (`memory_20250818`) over the project's store: @baton/core's handler with
 * secret redaction and the checklist guard as `beforeWrite` hooks, plus the guard's rules for the
 * commands that are not writes (delete, rename) and for a `create` over an existing checklist.
 */
export function createSessionMemoryTool(options: SessionMemoryToolOptions): SessionTool {
  const guardOptions = options.allowFeatureAdditions ? { allowAdditions: true } : {};
  const gate: FlipGate | undefined =
    options.verifyFlips === undefined ? undefined : { allowed: new Set(), pending: null };
  const tool = createMemoryTool({
    store: options.store,
    session: options.session,
    quotaEnforcement: options.quotaEnforcement ?? 'handler',
    hooks: {
      beforeWrite: composeBeforeWrite(
        createRedactionHook(),
        createChecklistGuard({ ...guardOptions, flipGate: gate }),
      ),
      afterChange: options.onChange,
    },
  });

  async function preCheck(input: unknown): Promise<ToolOutcome | null> {
    const command = stringField(input, 'command');
    if (command !== undefined && command !== 'view') {
      const touched = [
        storePathOf(stringField(input, 'path')),
        storePathOf(stringField(input, 'old_path')),
        storePathOf(stringField(input, 'new_path')),
      ];
      if (touched.some((path) => path !== undefined && isProgressArchivePath(path))) {
        return { content: PROGRESS_ARCHIVE_RULE, isError: true };
      }
    }
    if (command === 'delete' && takesChecklist(storePathOf(stringField(input, 'path')))) {
      return {
        content: `Refused: ${FEATURES_PATH} cannot be deleted. Nothing was changed. ${CHECKLIST_RULE}`,
        isError: true,
      };
    }
    if (command === 'rename') {
      const from = storePathOf(stringField(input, 'old_path'));
      const to = storePathOf(stringField(input, 'new_path'));
      if (takesChecklist(from) || to === FEATURES_STORE_PATH) {
        return {
          content: `Refused: ${FEATURES_PATH} cannot be renamed, moved or replaced. Nothing was changed. ${CHECKLIST_RULE}`,
          isError: true,
        };
      }
    }
    if (command === 'create' && storePathOf(stringField(input, 'path')) === FEATURES_STORE_PATH) {
      // Whatever `create` does with an existing file, it must not replace the checklist wholesale.
      const current = await options.store.read(FEATURES_STORE_PATH).catch(() => null);
      const text = stringField(input, 'file_text');
      if (current !== null && text !== undefined) {
        const refusal = checkChecklistWrite(current, redactSecrets(text).text, guardOptions);
        if (refusal !== null) return { content: refusal, isError: true };
      }
    }
    return null;
  }

  /**
   * A write that would flip features to passing runs once to learn which (the gate refuses it,
   * nothing is written), then the checks run, then it runs again with those flips allowed.
   */
  async function executeVerified(
    input: unknown,
    gate: FlipGate,
    verifyFlips: NonNullable<SessionMemoryToolOptions['verifyFlips']>,
  ): Promise<ToolOutcome> {
    gate.pending = null;
    gate.allowed = new Set();
    const first = await tool.execute(input);
    const pending = gate.pending as FlipGate['pending'];
    gate.pending = null;
    if (pending === null) return first;
    const verdict = await verifyFlips(pending.ids, pending.features);
    if (!verdict.accepted) return { content: verdict.message, isError: true };
    gate.allowed = new Set(pending.ids);
    let second: ToolOutcome;
    try {
      second = await tool.execute(input);
    } finally {
      gate.allowed = new Set();
    }
    if (second.isError) return second;
    verdict.commit();
    return { content: `${second.content}\n\n${verdict.note}`, isError: false };
  }

  return {
    name: 'memory',
    definition: { type: 'memory_20250818', name: 'memory' },
    lane: 'memory',
    async execute(input) {
      const refused = await preCheck(input);
      if (refused !== null) return refused;
      if (gate === undefined || options.verifyFlips === undefined) return tool.execute(input);
      return executeVerified(input, gate, options.verifyFlips);
    },
    summarize(input) {
      const command = stringField(input, 'command') ?? '?';
      const target =
        command === 'rename'
          ? `${stringField(input, 'old_path') ?? '?'} -> ${stringField(input, 'new_path') ?? '?'}`
          : (stringField(input, 'path') ?? '');
      return shorten(`${command} ${target}`);
    },
  };
}
