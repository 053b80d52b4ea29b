/**
 * The flags `baton run` and `baton enqueue` both take to create a project, as commander parses
 * them: one list, so the two verbs describe a new project the same way.
 */
export interface NewProjectFlags {
  goal?: string;
  goalFile?: string;
  workspace?: string;
  /** `--adopt`: a `--workspace` already holding files becomes the first checkpoint. */
  adopt?: boolean;
  repo?: string;
  base?: string;
  skipHooks?: boolean;
  budgetUsd?: number;
  stallAfter?: number;
  /** `--allow-host` (repeatable): hosts the project's commands reach through the proxy. */
  allowHost?: string[];
  /** `--check`: the check of features that have none. */
  check?: string;
  /** `--require-checks`: refuse flips of features with no check. */
  requireChecks?: boolean;
  /** `--check-timeout`: seconds one check may run. */
  checkTimeout?: number;
  /** `--regression-budget`: seconds of end-of-session re-runs. */
  regressionBudget?: number;
  /** `--mcp-config FILE`: the project's MCP servers (`.mcp.json` format), kept with the project. */
  mcpConfig?: string;
  json?: boolean;
}
