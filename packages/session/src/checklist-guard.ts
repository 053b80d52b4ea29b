import {
  MemoryToolError,
  redactSecrets,
  type MemoryToolHooks,
  type MemoryWrite,
  type SecretPattern,
} from '@baton/core';
import { checkChecklistWrite, type ChecklistRuleOptions } from './checklist-rules.js';
import { FEATURES_PATH } from './features.js';

/** Options of `createChecklistGuard`. */
export type ChecklistGuardOptions = ChecklistRuleOptions;

/**
 * A `beforeWrite` hook for @baton/core's memory tool: refuses (with a `MemoryToolError` the model
 * reads) any write that leaves `/memories/features.json` invalid, removes or reorders a feature,
 * or changes an id, description or steps. Flipping `passes` is allowed, and so is the first
 * creation of the file. Deletes and renames are not writes: `createSessionMemoryTool` refuses those.
 */
export function createChecklistGuard(
  options: ChecklistGuardOptions = {},
): NonNullable<MemoryToolHooks['beforeWrite']> {
  return (write: MemoryWrite) => {
    if (write.path !== FEATURES_PATH) return undefined;
    const refusal = checkChecklistWrite(write.before, write.after, options);
    if (refusal !== null) throw new MemoryToolError(refusal, { code: 'refused' });
    return undefined;
  };
}

/** A `beforeWrite` hook that replaces secrets with `[REDACTED:<kind>]` markers (patterns in redaction.ts). */
export function createRedactionHook(
  patterns?: readonly SecretPattern[],
): NonNullable<MemoryToolHooks['beforeWrite']> {
  return (write: MemoryWrite) => {
    const result = redactSecrets(write.after, patterns);
    return result.found.length > 0 ? result.text : undefined;
  };
}

/**
 * Chain `beforeWrite` hooks: each sees the content the previous one produced. Redaction runs
 * before the guard so the guard validates what will actually be stored.
 */
export function composeBeforeWrite(
  ...hooks: Array<NonNullable<MemoryToolHooks['beforeWrite']>>
): NonNullable<MemoryToolHooks['beforeWrite']> {
  return (write: MemoryWrite) => {
    let current = write.after;
    let changed = false;
    for (const hook of hooks) {
      const next = hook({ ...write, after: current });
      if (next !== undefined) {
        current = next;
        changed = true;
      }
    }
    return changed ? current : undefined;
  };
}
