import type { Command } from 'commander';
import { Option } from 'commander';
import type { ProjectRecord } from '@baton/projects';
import { PROJECT_STATUSES, type ProjectStatus } from '@baton/projects/schema';
import { COST_HELP } from '../internal/cost-help.js';
import { formatHitRate, formatTokens, formatUsd } from '../internal/format.js';
import { withProjects } from '../internal/project-access.js';
import { formatTable } from '../internal/table.js';
import { outputJson, terminalSafe } from '../internal/terminal-text.js';

const STATUSES = PROJECT_STATUSES;

interface ProjectsOptions {
  json?: boolean;
  status?: ProjectStatus;
  local?: boolean;
}

/** One row of `baton projects` (also its `--json` shape, one object per project). */
export interface ProjectRow {
  id: string;
  status: string;
  featuresPassing: number;
  featuresTotal: number;
  /** Passing features whose last check passed. */
  featuresVerified: number;
  /** Passing features accepted without a check. */
  featuresClaimed: number;
  /** Features Baton set back to failing after their check failed on a re-run. */
  featuresRegressed: number;
  sessions: number;
  /** Uncached input tokens (the API's `input_tokens`). */
  inputTokens: number | null;
  /** Input tokens read from the prompt cache. */
  cacheReadInputTokens: number | null;
  /** Input tokens written to the prompt cache. */
  cacheCreationInputTokens: number | null;
  outputTokens: number | null;
  costUsd: number | null;
  createdAt: string;
  /** Why the project stopped where it is (e.g. `no_progress: ...`), when known. */
  statusReason: string | null;
  /** Whether its last session's commands ran sandboxed; `null` before its first session. */
  sandbox: 'on' | 'off' | null;
}

/** Projects as rows, the same for Redis and `BATON_HOME` (both keep a `ProjectRecord`). */
export function projectRows(projects: readonly ProjectRecord[]): ProjectRow[] {
  return projects.map((project) => ({
    id: project.id,
    status: project.status,
    featuresPassing: project.counters.featuresPassing,
    featuresTotal: project.counters.featuresTotal,
    featuresVerified: project.counters.featuresVerified,
    featuresClaimed: project.counters.featuresClaimed,
    featuresRegressed: project.counters.featuresRegressed,
    sessions: project.counters.sessions,
    inputTokens: project.counters.inputTokens,
    cacheReadInputTokens: project.counters.cacheReadInputTokens,
    cacheCreationInputTokens: project.counters.cacheCreationInputTokens,
    outputTokens: project.counters.outputTokens,
    costUsd: Number(project.counters.costUsd.toFixed(6)),
    createdAt: new Date(project.createdAt).toISOString(),
    statusReason: project.statusReason,
    sandbox:
      project.sessionSandbox === null ? null : project.sessionSandbox.mode === 'off' ? 'off' : 'on',
  }));
}

/** The table of `baton projects` and `baton status` without an id. */
export function renderProjectRows(rows: ProjectRow[]): string {
  const dash = '-';
  return formatTable(
    ['ID', 'STATUS', 'FEATURES', 'CHECKS', 'SESSIONS', 'TOKENS', 'CACHED', 'USD', 'SANDBOX'],
    rows.map((row) => {
      const input =
        row.inputTokens === null
          ? null
          : row.inputTokens + (row.cacheReadInputTokens ?? 0) + (row.cacheCreationInputTokens ?? 0);
      return [
        row.id,
        row.status,
        `${row.featuresPassing}/${row.featuresTotal}`,
        `${row.featuresVerified}v ${row.featuresClaimed}c ${row.featuresRegressed}r`,
        String(row.sessions),
        input === null || row.outputTokens === null ? dash : formatTokens(input + row.outputTokens),
        input === null || row.cacheReadInputTokens === null
          ? dash
          : formatHitRate(row.cacheReadInputTokens, input),
        row.costUsd === null ? dash : formatUsd(row.costUsd),
        row.sandbox === null ? dash : row.sandbox === 'off' ? 'OFF' : 'on',
      ];
    }),
    [2, 4, 5, 6, 7],
  );
}

/** `baton projects [--json] [--status S] [--local]`. */
export function registerProjectsCommand(program: Command): void {
  program
    .command('projects')
    .description(
      'List every project: status, features passing, checks (verified v, claimed c, regressed r), sessions, tokens (input + output), the share of input read from the prompt cache, and USD.',
    )
    .addOption(
      new Option('--status <status>', 'only projects with this status').choices([...STATUSES]),
    )
    .option('--json', 'print a JSON array of projects')
    .option('--local', '`baton run` projects under BATON_HOME instead of Redis')
    .addHelpText(
      'after',
      `${COST_HELP}\n\nReads REDIS_CLUSTER_NODES or REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX unless --local.`,
    )
    .action(async (options: ProjectsOptions) => {
      const rows = projectRows(
        await withProjects(options, (projects) => projects.listProjects(options.status)),
      );
      if (options.json === true) {
        process.stdout.write(`${outputJson(rows, 2)}\n`);
        return;
      }
      if (rows.length === 0) {
        process.stdout.write(
          options.status === undefined
            ? 'No projects yet. Start one with `baton enqueue` (or `baton run` locally).\n'
            : `No ${options.status} projects.\n`,
        );
        return;
      }
      process.stdout.write(`${renderProjectRows(terminalSafe(rows))}\n`);
    });
}
