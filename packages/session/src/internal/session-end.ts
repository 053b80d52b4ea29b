import type { MemoryStore } from '@baton/core';
import { allFeaturesPass, countFeatures, readFeatures } from '../features.js';
import type { SessionKind, SessionResult } from '../types.js';
import { countVerification, pendingChecks } from '../verification.js';
import type { Checkpointer } from './checkpoints.js';
import type { EventBody } from './events.js';
import type { FeatureVerifier } from './feature-verifier.js';

/** The end-of-session checkpoint; a checkpoint that could not be saved is noted, not thrown. */
export async function saveFinalCheckpoint(
  checkpointer: Checkpointer,
  result: SessionResult,
): Promise<void> {
  const checkpoint = await checkpointer.save('end', {
    subject:
      result.flippedFeatures.length > 0
        ? `flipped ${result.flippedFeatures.join(', ')}`
        : 'no feature flipped',
    trailers: [
      ['Outcome', `${result.outcome} (${result.stopReason ?? ''})`],
      ['Features', `${result.featuresAfter.passing}/${result.featuresAfter.total} passing`],
    ],
  });
  result.commits = [...checkpointer.commits];
  if (checkpointer.failures > 0) result.checkpointFailures = checkpointer.failures;
  if (checkpoint === undefined) {
    result.reason += ' The workspace checkpoint failed.';
    result.checkpointError = checkpointer.failure ?? 'the checkpoint failed';
    return;
  }
  // The summary's hooks are the session's: a refusal mid-session is not hidden by an end
  // checkpoint that had nothing left to commit.
  result.checkpoint = { ...checkpoint, hooks: checkpointer.hooks };
  if (checkpoint.pushError?.code === 'push_rejected' && result.outcome !== 'failed') {
    result.outcome = 'failed';
    result.stopReason = 'push_rejected';
    result.error = checkpoint.pushError.message;
    result.reason = `The checkpoint push was rejected: ${checkpoint.pushError.message}`;
  } else if (!checkpoint.pushed && checkpoint.head !== null) {
    result.reason += ` The last checkpoint was not pushed: ${checkpoint.pushError?.message ?? 'unknown reason'}`;
  }
}

/** What the end-of-session re-run needs besides the verifier and the result. */
export interface VerifyAtEndFacts {
  store: MemoryStore;
  kind: SessionKind;
  sessionId: string;
  /** The commit the checks run on: the final checkpoint's, else the last known one. */
  commit: string | null;
  emit: (body: EventBody) => Promise<void>;
}

/**
 * The end-of-session re-run of passing features' checks on the final commit: a failing one is
 * flipped back (regressed). The result then carries the project's check record and counts.
 * The verifier is disposed whatever happens.
 */
export async function verifyAtEnd(
  verifier: FeatureVerifier,
  result: SessionResult,
  facts: VerifyAtEndFacts,
): Promise<void> {
  try {
    const { store, commit } = facts;
    const pass =
      facts.kind === 'end' || result.outcome === 'cancelled'
        ? { ran: 0, regressed: [], durationMs: 0, changes: [] }
        : await verifier.regressionPass(store, commit);
    for (const change of pass.changes) await facts.emit({ type: 'memory-change', change });
    const features = await readFeatures(store);
    result.featuresAfter = countFeatures(features);
    result.allFeaturesPass = allFeaturesPass(features);
    result.checks = { ...verifier.checks };
    result.verification = {
      ...countVerification(features, verifier.checks),
      pending: pendingChecks(
        features,
        verifier.checks,
        commit,
        verifier.defaultCheck,
        facts.sessionId,
      ).length,
      regressedIds: pass.regressed,
      rerun: pass.ran,
      rerunMs: pass.durationMs,
    };
    if (pass.regressed.length > 0) {
      result.reason += ` Regressed (check failed on re-run, set back to failing): ${pass.regressed.join(', ')}.`;
    }
  } finally {
    await verifier.dispose();
  }
}
