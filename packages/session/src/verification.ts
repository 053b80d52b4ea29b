import type { Feature } from './features.js';

/**
 * Verified progress: what Baton records when it runs a feature's `check`, and what a project's
 * features count as. The record lives outside the model's memory (session events and the
 * session's result, which `baton run` and the worker store with the project); the model can
 * flip `passes`, never write evidence.
 */

/** Why Baton ran a check: the model flipped `passes` to true, or the end-of-session re-run. */
export type CheckTrigger = 'flip' | 'regression';

/** One run of one feature's check. */
export interface CheckEvidence {
  featureId: string;
  /** The command that ran (the feature's `check`, or the project's default check). */
  command: string;
  /** Exit 0 within the timeout. */
  passed: boolean;
  /** The command's exit code; `null` when it was killed or could not start. */
  exitCode: number | null;
  /** `timeout`: killed at its timeout (counts as failed); `not_started`: the sandbox could not run it. */
  stopped?: 'timeout' | 'not_started' | undefined;
  durationMs: number;
  /** The last lines of its output (stdout and stderr interleaved), redacted, at most 2,000 characters. */
  outputTail: string;
  /** The workspace commit the check ran on (the checkpoint made before it), `null` without checkpoints. */
  commit: string | null;
  /** When it ended (ms since the epoch). */
  at: number;
  trigger: CheckTrigger;
  /** The session that ran it. */
  sessionId: string;
}

/**
 * What Baton knows of one feature:
 * - `verified`: its last check passed (`evidence.commit` is where);
 * - `claimed`: it passes with no check to run (accepted on the model's word);
 * - `regressed`: it passed, a later re-run of its check failed, Baton flipped it back;
 * - `refused`: the model flipped it, the check failed, the flip was refused.
 */
export type FeatureCheckStatus = 'verified' | 'claimed' | 'regressed' | 'refused';

export interface FeatureCheckState {
  status: FeatureCheckStatus;
  /** The last check run of the feature; `null` for a claimed feature. */
  evidence: CheckEvidence | null;
}

/** The check state of every feature Baton has a record of, by feature id. */
export type FeatureChecks = Record<string, FeatureCheckState>;

/** How a project's features stand, as `baton status`, `baton projects` and webhooks count them. */
export interface VerificationCounts {
  /** Passing features whose last check passed. */
  verified: number;
  /** Passing features accepted without a check. */
  claimed: number;
  /** Failing features Baton flipped back after their check failed. */
  regressed: number;
  /** Passing features with no record yet (e.g. flipped before verification existed); re-run first. */
  unverified: number;
}

/** Per-project verification settings (`--check`, `--require-checks`, budgets). */
export interface VerificationOptions {
  /**
   * The check of features that have none, run with the feature's id in `BATON_FEATURE_ID`
   * (`--check "npm test -- --grep $BATON_FEATURE_ID"`). Default: none.
   */
  defaultCheck?: string | undefined;
  /** Refuse `passes: true` for a feature with no check (instead of accepting it as claimed). Default false. */
  requireChecks?: boolean | undefined;
  /** Wall clock of one check run, in ms. Default `DEFAULT_CHECK_TIMEOUT_MS` (120 s). */
  checkTimeoutMs?: number | undefined;
  /**
   * Time the end-of-session re-run of passing features' checks may take, in ms. Default
   * `DEFAULT_REGRESSION_BUDGET_MS` (60 s). When every feature passes, every check runs whatever
   * the budget: a project completes only on checks that passed on its final commit.
   */
  regressionBudgetMs?: number | undefined;
  /**
   * Most checks the end-of-session re-run runs, least recently verified first, so a session's
   * cost does not grow with the number of passing features: every passing feature is re-verified
   * within `ceil(passing / regressionChecksPerSession)` sessions. Default
   * `DEFAULT_REGRESSION_CHECKS_PER_SESSION` (10). Like the budget, it does not apply when every
   * feature passes.
   */
  regressionChecksPerSession?: number | undefined;
  /** The record so far (the previous session's `SessionResult.checks`). Default: none. */
  previous?: FeatureChecks | undefined;
}

export const DEFAULT_CHECK_TIMEOUT_MS = 120_000;
export const DEFAULT_REGRESSION_BUDGET_MS = 60_000;
export const DEFAULT_REGRESSION_CHECKS_PER_SESSION = 10;
/** Most characters of a check's output kept as evidence and shown to the model. */
export const CHECK_OUTPUT_TAIL_CHARS = 2_000;
/** The variable that names the feature a check runs for. */
export const FEATURE_ID_VARIABLE = 'BATON_FEATURE_ID';

/** The command Baton runs to verify `feature`, or undefined when there is none. */
export function effectiveCheck(
  feature: Pick<Feature, 'check'>,
  defaultCheck: string | undefined,
): string | undefined {
  return feature.check ?? defaultCheck;
}

/** Counts of verified, claimed, regressed and unverified features. */
export function countVerification(
  features: readonly Feature[] | null,
  checks: FeatureChecks,
): VerificationCounts {
  const counts: VerificationCounts = { verified: 0, claimed: 0, regressed: 0, unverified: 0 };
  for (const feature of features ?? []) {
    const status = checks[feature.id]?.status;
    if (!feature.passes) {
      if (status === 'regressed') counts.regressed += 1;
    } else if (status === 'verified') counts.verified += 1;
    else if (status === 'claimed') counts.claimed += 1;
    else counts.unverified += 1;
  }
  return counts;
}

/**
 * Passing features whose check has not passed on `commit`: what still has to run before the
 * project may complete (claimed features, having no check, are not pending). Without
 * checkpoints (`commit` is `null`) no evidence names the workspace's state, so only a check that
 * passed in `sessionId`, the session now ending, counts.
 */
export function pendingChecks(
  features: readonly Feature[] | null,
  checks: FeatureChecks,
  commit: string | null,
  defaultCheck: string | undefined,
  sessionId?: string,
): string[] {
  return (features ?? [])
    .filter((feature) => feature.passes && effectiveCheck(feature, defaultCheck) !== undefined)
    .filter((feature) => {
      const evidence = checks[feature.id]?.evidence;
      if (evidence?.passed !== true) return true;
      return commit === null ? evidence.sessionId !== sessionId : evidence.commit !== commit;
    })
    .map((feature) => feature.id);
}

/**
 * Where one feature stands for people (`baton checks`, the dashboard's badges): its record's
 * status while that agrees with `passes`, else `unverified` (passing with no record) or
 * `failing` (failing, never refused or regressed).
 */
export type FeatureCheckView = FeatureCheckStatus | 'unverified' | 'failing';

export interface FeatureCheckRow {
  id: string;
  description: string;
  passes: boolean;
  /** The command Baton runs for it (its own `check`, else the project's default), or `null`. */
  check: string | null;
  state: FeatureCheckView;
  /** Its last check run, `null` when it never ran. */
  evidence: CheckEvidence | null;
}

/** One row per feature of the checklist, in checklist order, with its check record. */
export function featureCheckRows(
  features: readonly Feature[] | null,
  checks: FeatureChecks,
  defaultCheck: string | undefined,
): FeatureCheckRow[] {
  return (features ?? []).map((feature) => {
    const record = checks[feature.id];
    const agrees =
      record !== undefined &&
      (feature.passes
        ? record.status === 'verified' || record.status === 'claimed'
        : record.status === 'regressed' || record.status === 'refused');
    return {
      id: feature.id,
      description: feature.description,
      passes: feature.passes,
      check: effectiveCheck(feature, defaultCheck) ?? null,
      state: agrees ? record.status : feature.passes ? 'unverified' : 'failing',
      evidence: record?.evidence ?? null,
    };
  });
}

/**
 * The entries of `after` that are new or differ from `before` (a check ran, or the status
 * moved): what a session adds to the stored record, so storing it costs the checks that ran,
 * not the project's features.
 */
export function changedChecks(before: FeatureChecks, after: FeatureChecks): FeatureChecks {
  const changed: FeatureChecks = {};
  for (const [id, state] of Object.entries(after)) {
    const old = before[id];
    if (
      old === undefined ||
      old.status !== state.status ||
      old.evidence?.at !== state.evidence?.at ||
      old.evidence?.sessionId !== state.evidence?.sessionId
    ) {
      changed[id] = state;
    }
  }
  return changed;
}

/** The last `max` characters of `text`, from a line start when one is near. */
export function outputTail(text: string, max = CHECK_OUTPUT_TAIL_CHARS): string {
  const trimmed = text.replace(/\s+$/, '');
  if (trimmed.length <= max) return trimmed;
  const tail = trimmed.slice(-max);
  const newline = tail.indexOf('\n');
  return newline >= 0 && newline < 200 ? tail.slice(newline + 1) : tail;
}

/** One line for people and the model: how a check run ended. */
export function describeEvidence(evidence: CheckEvidence): string {
  const seconds = `${(evidence.durationMs / 1000).toFixed(1)} s`;
  const where = evidence.commit === null ? '' : ` at commit ${evidence.commit.slice(0, 12)}`;
  if (evidence.stopped === 'timeout') {
    return `did not finish within ${seconds} and was stopped${where}`;
  }
  if (evidence.stopped === 'not_started') return `could not start${where}`;
  return `${evidence.passed ? 'passed' : 'failed'} (exit code ${evidence.exitCode ?? 'none'}, ${seconds}${where})`;
}
