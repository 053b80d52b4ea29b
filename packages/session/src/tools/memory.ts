import {
  createMemoryTool,
  parseMemoryPath,
  redactSecrets,
  type MemoryChange,
  type MemoryQuotaEnforcement,
  type MemoryStore,
} from '@baton/core';
import {
  composeBeforeWrite,
  createChecklistGuard,
  createRedactionHook,
} from '../checklist-guard.js';
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
  quotaEnforcement?: MemoryQuotaEnforcement;
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
  const tool = createMemoryTool({
    store: options.store,
    session: options.session,
    quotaEnforcement: options.quotaEnforcement ?? 'handler',
    hooks: {
      beforeWrite: composeBeforeWrite(createRedactionHook(), createChecklistGuard(guardOptions)),
      ...(options.onChange ? { afterChange: options.onChange } : {}),
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

  return {
    name: 'memory',
    definition: { type: 'memory_20250818', name: 'memory' },
    lane: 'memory',
    async execute(input) {
      const refused = await preCheck(input);
      if (refused !== null) return refused;
      return tool.execute(input);
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
