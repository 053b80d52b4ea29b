import {
  MemoryToolError,
  redactSecrets,
  type MemoryToolHooks,
  type MemoryWrite,
  type SecretPattern,
} from '@baton/core';
import { checkChecklistWrite, type ChecklistRuleOptions } from './checklist-rules.js';
import { FEATURES_PATH, type Feature, flippedFeatureIds, parseFeatures } from './features.js';

/**
 * Holds back flips to `passes: true` until Baton verified them. The guard is synchronous (it
 * may run inside a store's retry loop), so it cannot run a check: it refuses the write and
 * leaves what it would flip in `pending`; the memory tool runs the checks and, when they pass,
 * repeats the command with those ids in `allowed`.
 */
export interface FlipGate {
  /** Ids whose flip was verified for the command being repeated. */
  allowed: ReadonlySet<string>;
  /** Set by the guard: the ids a refused write would flip, and the checklist it would leave. */
  pending: { ids: string[]; features: Feature[] } | null;
}

/** The refusal the gate throws; the model never reads it (the memory tool replaces it). */
const FLIP_PENDING_MESSAGE = 'Refused: the flip waits for its check.';

/** Options of `createChecklistGuard`. */
export interface ChecklistGuardOptions extends ChecklistRuleOptions {
  /** Verify flips to passing before they are written. Default: none (any flip is accepted). */
  flipGate?: FlipGate | undefined;
}

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
    const gate = options.flipGate;
    if (gate === undefined) return undefined;
    const after = parseFeatures(write.after);
    if (!after.ok) return undefined;
    const before = write.before === null ? null : parseFeatures(write.before);
    // A first checklist (or one replacing a broken file) that already says `passes: true` is a
    // claim like any flip.
    const flipped = flippedFeatureIds(
      before?.ok === true ? before.features : null,
      after.features,
    ).filter((id) => !gate.allowed.has(id));
    if (flipped.length === 0) return undefined;
    gate.pending = { ids: flipped, features: after.features };
    throw new MemoryToolError(FLIP_PENDING_MESSAGE, { code: 'refused' });
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
