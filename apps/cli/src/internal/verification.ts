import type { ProjectInput, ProjectVerification } from '@baton/projects';

/**
 * `--check`, `--require-checks`, `--check-timeout` and `--regression-budget` as the project
 * input's `verification` (absent when none is given).
 */
export function verificationInput(options: {
  check?: string | undefined;
  requireChecks?: boolean | undefined;
  checkTimeout?: number | undefined;
  regressionBudget?: number | undefined;
}): Pick<ProjectInput, 'verification'> {
  const verification = {
    ...(options.check === undefined ? {} : { check: options.check }),
    ...(options.requireChecks === true ? { requireChecks: true } : {}),
    ...(options.checkTimeout === undefined ? {} : { checkTimeoutSeconds: options.checkTimeout }),
    ...(options.regressionBudget === undefined
      ? {}
      : { regressionBudgetSeconds: options.regressionBudget }),
  };
  return Object.keys(verification).length === 0 ? {} : { verification };
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
