/** Why a context configuration was refused. */
export type ContextConfigErrorCode =
  /** `defineContextConfig` input (or an `override`) broke a rule. */
  | 'invalid_config'
  /** `baton.config.json` is not JSON, or its `context` key broke a rule. */
  | 'invalid_file'
  /** A `BATON_CONTEXT_*` environment variable could not be read. */
  | 'invalid_env'
  /** `baton.config.json` exists but could not be read. */
  | 'unreadable_file';

/** One problem, located by its key path (`clearToolUses.keep.value`, `BATON_CONTEXT_PRESET`, ...). */
export interface ContextConfigIssue {
  /** Where the problem is: a dotted key path (arrays as `[i]`) or an environment variable name. */
  path: string;
  /** The rule that was broken, in plain words. */
  message: string;
  /** Which layer the problem came from: `input`, `baton.config.json`, `env`, `override` or `merged`. */
  source: string;
}

/**
 * The only error this package throws. It lists every problem at once, so a user fixes a config in
 * one pass instead of one error per run.
 */
export class ContextConfigError extends Error {
  override readonly name = 'ContextConfigError';
  readonly code: ContextConfigErrorCode;
  readonly issues: readonly ContextConfigIssue[];

  constructor(
    code: ContextConfigErrorCode,
    issues: readonly ContextConfigIssue[],
    options?: { cause?: unknown },
  ) {
    super(formatIssues(issues), options);
    this.code = code;
    this.issues = issues;
  }
}

function formatIssues(issues: readonly ContextConfigIssue[]): string {
  const count = issues.length === 1 ? '1 problem' : `${issues.length} problems`;
  const lines = issues.map((issue) => {
    const where = issue.source === 'input' ? '' : `${issue.source}: `;
    return `- ${where}${issue.path === '' ? '(root)' : issue.path}: ${issue.message}`;
  });
  return `Invalid context config (${count}):\n${lines.join('\n')}`;
}
