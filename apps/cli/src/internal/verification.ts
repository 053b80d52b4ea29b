import type { ProjectInput, ProjectVerification } from '@baton/projects';

/** `--check` and `--require-checks` as the project input's `verification` (absent when neither is given). */
export function verificationInput(options: {
  check?: string | undefined;
  requireChecks?: boolean | undefined;
}): Pick<ProjectInput, 'verification'> {
  if (options.check === undefined && options.requireChecks !== true) return {};
  return {
    verification: {
      ...(options.check === undefined ? {} : { check: options.check }),
      ...(options.requireChecks === true ? { requireChecks: true } : {}),
    },
  };
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
  return `verifies flips with each feature's check (${fallback}; ${flips})`;
}
