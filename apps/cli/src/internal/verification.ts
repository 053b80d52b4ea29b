import type { ProjectVerification } from '@baton/projects';

/**
 * `--check`, `--require-checks`, `--check-timeout` and `--regression-budget` as the project
 * input's `verification` (`undefined` when none is given).
 */
export function verificationInput(options: {
  check?: string | undefined;
  requireChecks?: boolean | undefined;
  checkTimeout?: number | undefined;
  regressionBudget?: number | undefined;
}): ProjectVerification | undefined {
  const verification = {
    check: options.check,
    requireChecks: options.requireChecks === true ? true : undefined,
    checkTimeoutSeconds: options.checkTimeout,
    regressionBudgetSeconds: options.regressionBudget,
  };
  return Object.values(verification).every((value) => value === undefined)
    ? undefined
    : verification;
}

/** One phrase for a project's verification settings: "checks each feature with its own check". */
export function describeVerification(verification: ProjectVerification | null): string {
  const fallback =
    verification?.check === undefined
      ? 'no default check'
      : `default check \`${verification.check}\``;
  const flips =
    verification?.requireChecks === true
      ? 'flips without a check refused'
      : 'flips without a check claimed';
  const limits = [
    verification?.checkTimeoutSeconds === undefined
      ? undefined
      : `checks stopped after ${verification.checkTimeoutSeconds} s`,
    verification?.regressionBudgetSeconds === undefined
      ? undefined
      : `re-runs ${verification.regressionBudgetSeconds} s per session`,
  ].filter((text) => text !== undefined);
  return `verifies flips with each feature's check (${[fallback, flips, ...limits].join('; ')})`;
}
