import type { Command } from 'commander';
import type {
  ProjectRecord,
  SessionSummary,
  StuckProject,
  WebhookDeliveryRecord,
} from '@baton/projects';
import { summarizeSandbox } from '@baton/workspace';
import { CliError } from '../errors.js';
import { parseProjectId } from '../internal/argument-parsers.js';
import { NO_DEPLOYMENT_MARKER, withProjects } from '../internal/project-access.js';
import { projectRows, renderProjectRows } from './projects.js';
import { COST_HELP } from '../internal/cost-help.js';
import { formatFileSize, formatHitRate } from '../internal/format.js';
import {
  cacheHitRate,
  defineContextConfig,
  summarizeContextConfig,
  totalInputTokens,
} from '@baton/context-config';
import { outputJson, terminalSafe } from '../internal/terminal-text.js';
import { describeVerification } from '../internal/verification.js';

/** The JSON shape of `baton status ID --json` (stable: scripts read it). */
export function projectJson(project: ProjectRecord) {
  return {
    id: project.id,
    status: project.status,
    statusReason: project.statusReason,
    statusAt: new Date(project.statusAt).toISOString(),
    goal: project.goal,
    workspace: project.workspace,
    repo: project.repo,
    base: project.base,
    baseCommit: project.baseCommit,
    branch: project.branch,
    lastCheckpoint: project.lastCheckpoint,
    skipHooks: project.skipHooks,
    model: project.model,
    fallbackModel: project.fallbackModel,
    contextPreset: project.contextPreset,
    /** The context config stored at creation, which every session resolves. */
    context: project.context,
    budgets: project.budgets,
    sandbox: project.sandbox,
    sessionSandbox: project.sessionSandbox,
    features: {
      passing: project.counters.featuresPassing,
      total: project.counters.featuresTotal,
      verified: project.counters.featuresVerified,
      claimed: project.counters.featuresClaimed,
      regressed: project.counters.featuresRegressed,
    },
    /** `--check`/`--require-checks` as stored at creation, `null` for the defaults. */
    verification: project.verification,
    sessions: project.counters.sessions,
    interruptions: project.counters.interruptions,
    tokens: {
      input: project.counters.inputTokens,
      cacheRead: project.counters.cacheReadInputTokens,
      cacheWrite: project.counters.cacheCreationInputTokens,
      output: project.counters.outputTokens,
      cleared: project.counters.clearedInputTokens,
    },
    /** Share of all input tokens read from the prompt cache, 0..1. */
    cacheHitRate: cacheHitRate(project.counters),
    costUsd: project.counters.costUsd,
    activeSession: project.activeSession,
    lastError: project.lastError,
    /** The project's own MCP servers by name and kind (their values are never shown). */
    mcpServers: Object.entries(project.mcp?.mcpServers ?? {}).map(([name, server]) => ({
      name,
      type: server.type ?? 'stdio',
    })),
    createdAt: new Date(project.createdAt).toISOString(),
  };
}

/** One line per recent webhook delivery (newest first), e.g. `project.completed -> http://host ok (3 attempts)`. */
function describeDeliveries(deliveries: readonly WebhookDeliveryRecord[]): string[] {
  if (deliveries.length === 0) return [];
  const failed = deliveries.filter((delivery) => !delivery.ok).length;
  const lines = [
    `webhooks  ${deliveries.length - failed} delivered, ${failed} failed (latest first)`,
  ];
  for (const delivery of deliveries.slice(0, 5)) {
    const attempts = `${delivery.attempts} attempt${delivery.attempts === 1 ? '' : 's'}`;
    const outcome = delivery.ok
      ? `ok (${attempts})`
      : `FAILED after ${attempts}: ${delivery.error ?? `HTTP ${delivery.status ?? '?'}`}`;
    lines.push(
      `          ${new Date(delivery.at).toISOString()} ${delivery.type} -> ${delivery.target} ${outcome}`,
    );
  }
  return lines;
}

/** What `baton status ID --json` lists of each session (`sessionCommits`). */
function sessionJson(session: SessionSummary) {
  return {
    sessionNumber: session.sessionNumber,
    kind: session.kind,
    outcome: session.outcome,
    workerId: session.workerId,
    commits: session.commits,
    checkpoint: session.checkpoint ?? null,
    checkpointError: session.checkpointError ?? null,
    checkpointFailures: session.checkpointFailures ?? 0,
    /** Late pushes of replaced sessions taken off the branch: `{ tip, fence, commits, keptOn }`. */
    replacedStale: session.replacedStale ?? [],
    model: session.model,
    fallback: session.fallback ?? null,
    /** Each MCP server's state at the session's end: `{ server, state, tools, message? }`. */
    mcp: session.mcp ?? [],
  };
}

const short = (commit: string | null | undefined) => (commit ? commit.slice(0, 12) : 'none');

/** The first eight names and a count. */
function nameList(names: readonly string[]): string {
  return names.length > 8
    ? `${names.slice(0, 8).join(', ')} and ${names.length - 8} more`
    : names.join(', ');
}

/**
 * Checkpoints that failed (a session whose last one failed first: its work is not on the branch)
 * and what the latest session's end checkpoint left out, by name with the reason.
 */
function describeCheckpointProblems(sessions: readonly SessionSummary[]): string[] {
  const lines: string[] = [];
  for (const session of sessions) {
    const failures = session.checkpointFailures ?? 0;
    const unpushed =
      session.checkpoint !== undefined &&
      !session.checkpoint.pushed &&
      session.checkpoint.head !== null;
    // A later session pushes what an earlier one could not (its commits stayed in the clone).
    const pushedLater = sessions.some(
      (later) => later.sessionNumber > session.sessionNumber && later.checkpoint?.pushed === true,
    );
    if (session.checkpointError !== undefined) {
      lines.push(
        `checkpoint FAILED in session ${session.sessionNumber}: ${session.checkpointError} (its last changes are not on the branch; fix the cause, then baton resume)`,
      );
    } else if (unpushed && !pushedLater) {
      lines.push(
        `checkpoint NOT PUSHED in session ${session.sessionNumber}: ${session.checkpoint?.error ?? 'unknown reason'} (committed in the worker's clone only; fix the remote, then baton resume)`,
      );
    } else if (unpushed) {
      lines.push(
        `checkpoint of session ${session.sessionNumber} was not pushed then (pushed by a later session)`,
      );
    } else if (failures > 0) {
      lines.push(
        `checkpoint failed ${failures} time${failures === 1 ? '' : 's'} in session ${session.sessionNumber} (saved by a later checkpoint)`,
      );
    }
  }
  for (const session of sessions) {
    for (const stale of session.replacedStale ?? []) {
      lines.push(
        `kept aside in session ${session.sessionNumber}: a replaced session's late push (fence ${stale.fence}, ${stale.commits} commit${stale.commits === 1 ? '' : 's'}, tip ${short(stale.tip)}) was taken off the branch and kept on ${stale.keptOn}; merge what you want from it, then delete it`,
      );
    }
  }
  const latest = [...sessions].sort((a, b) => b.sessionNumber - a.sessionNumber)[0];
  const checkpoint = latest?.checkpoint;
  if (latest !== undefined && checkpoint !== undefined) {
    const leftOut = [
      ...checkpoint.skipped.map((file) => `${file} (secret)`),
      ...(checkpoint.tooLarge ?? []).map(
        (file) => `${file.path} (too large: ${formatFileSize(file.bytes)})`,
      ),
      ...(checkpoint.special ?? []).map((file) => `${file.path} (${file.kind})`),
    ];
    if (leftOut.length > 0) {
      lines.push(
        `left out  of session ${latest.sessionNumber}'s checkpoint, kept in the workspace: ${nameList(leftOut)}`,
      );
    }
  }
  return lines;
}

function describeProject(
  project: ProjectRecord,
  sessions: readonly SessionSummary[],
  deliveries: readonly WebhookDeliveryRecord[],
  stuck: StuckProject | null,
): string {
  const c = project.counters;
  const lines = [
    `project   ${project.id}`,
    `status    ${project.status}${project.statusReason ? ` (${project.statusReason})` : ''} since ${new Date(project.statusAt).toISOString()}`,
    ...(stuck === null ? [] : [`problem   ${stuck.problem}`, `fix       ${stuck.fix}`]),
    ...(stuck === null && (project.status === 'failed' || project.status === 'paused')
      ? [`fix       baton resume ${project.id}`]
      : []),
    `features  ${c.featuresPassing}/${c.featuresTotal} passing (${c.featuresVerified} verified, ${c.featuresClaimed} claimed, ${c.featuresRegressed} regressed; baton checks ${project.id})`,
    `checks    ${describeVerification(project.verification)}`,
    `sessions  ${c.sessions}${c.interruptions > 0 ? ` (${c.interruptions} interrupted)` : ''}`,
    `tokens    ${totalInputTokens(c)} in (${c.cacheReadInputTokens} read from cache, ${c.cacheCreationInputTokens} written, ${c.inputTokens} uncached), ${c.outputTokens} out, ${c.clearedInputTokens} cleared`,
    `cache     ${formatHitRate(c.cacheReadInputTokens, totalInputTokens(c))} of input read from the prompt cache`,
    `cost      $${c.costUsd.toFixed(4)}`,
    `context   ${summarizeContextConfig(defineContextConfig(project.context))}`,
    `repo      ${project.repo ?? "none (a bare repository in the worker's BATON_HOME)"}`,
    ...(project.base === null ? [] : [`base      ${project.base} (${short(project.baseCommit)})`]),
    `branch    ${project.branch}${project.skipHooks ? ' (hooks skipped)' : ''}`,
    `checkpoint ${short(project.lastCheckpoint)}`,
    `workspace ${project.workspace ?? "each worker's BATON_HOME/workspaces/" + project.id}`,
    `model     ${project.model ?? "the worker's BATON_MODEL"} · fallback ${project.fallbackModel ?? "the worker's BATON_FALLBACK_MODEL, if set"}`,
    `sandbox   ${project.sessionSandbox === null ? 'no session yet' : summarizeSandbox(project.sessionSandbox)}`,
  ];
  const settings = project.sandbox;
  if (
    settings !== null &&
    settings.allowedHosts !== undefined &&
    settings.allowedHosts.length > 0
  ) {
    lines.push(`hosts     ${settings.allowedHosts.join(', ')} (allowed through the sandbox proxy)`);
  }
  lines.push(...describeMcpServers(project, sessions));
  if (project.activeSession) {
    lines.push(
      `running   session ${project.activeSession.sessionNumber} on ${project.activeSession.workerId}`,
    );
  }
  if (project.lastError) lines.push(`lastError ${project.lastError}`);
  const withCommits = sessions.filter((session) => session.commits.length > 0);
  if (withCommits.length > 0) {
    lines.push('commits');
    for (const session of withCommits) {
      const pushed = session.checkpoint === undefined || session.checkpoint.pushed;
      lines.push(
        `  session ${session.sessionNumber} (${session.outcome}): ${session.commits.map(short).join(' ')}${pushed ? '' : ' (last not pushed)'}`,
      );
    }
  }
  lines.push(...describeCheckpointProblems(sessions));
  const fellBack = sessions.filter((session) => session.fallback !== undefined);
  if (fellBack.length > 0) {
    lines.push('fallbacks');
    for (const session of fellBack) {
      const fallback = session.fallback;
      if (fallback === undefined) continue;
      lines.push(
        `  session ${session.sessionNumber}: ${fallback.from} stayed overloaded, ${fallback.to} from turn ${fallback.turn}`,
      );
    }
  }
  lines.push(...describeDeliveries(deliveries));
  return `${lines.join('\n')}\n`;
}

/**
 * The project's MCP servers: those it was created with (names only; values are `${VAR}`
 * references, never shown resolved) and how each stood at the end of the latest session that had
 * any (the repository's `.mcp.json` and the worker's file included).
 */
function describeMcpServers(project: ProjectRecord, sessions: readonly SessionSummary[]): string[] {
  const configured = Object.keys(project.mcp?.mcpServers ?? {});
  const latest = [...sessions].reverse().find((session) => (session.mcp?.length ?? 0) > 0);
  if (configured.length === 0 && latest === undefined) return [];
  const lines = [
    `mcp       ${configured.length === 0 ? "no servers of its own (the repository's .mcp.json and the worker's BATON_MCP_CONFIG apply)" : configured.join(', ')}`,
  ];
  for (const server of latest?.mcp ?? []) {
    lines.push(
      `  ${server.server}: ${server.state}${server.state === 'ready' ? ` (${server.tools} tools)` : ''} in session ${latest?.sessionNumber ?? ''}${server.message === undefined ? '' : ` · ${server.message}`}`,
    );
  }
  return lines;
}

/** `baton status [ID]`: one project's record, or every project in one table. */
export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description(
      'Show a queued project from Redis (a `baton run` project with --local): status, features, sessions, tokens, the share of input read from the prompt cache, cost, workspace, sandbox, MCP servers and their state, webhooks. Without an id: every project, exactly as `baton projects` lists them (same columns, same --json rows).',
    )
    .addHelpText('after', COST_HELP)
    .addHelpText(
      'after',
      '\nStuck projects: a queued or running project that no session job and no worker will run\n' +
        "(a Redis fault on the chaining path) shows a `problem` line, with the failed job's\n" +
        'reason if it failed, and a `fix` line: `baton resume ID` (`stuck` in --json). Failed and\n' +
        'paused projects show the same fix. An empty Redis without the deployment marker is\n' +
        'reported as new or wiped (docs/operations.md#redis-faults). Without an id, every stuck\n' +
        'project, every project a session job names that Redis lost, and every fragment of a\n' +
        'record Redis lost (a bounded scan of the project keys) gets a `problem` and a `fix` line\n' +
        'below the rows (not in --json); a `note` line says when the scan stopped at its bound.',
    )
    .argument('[id]', 'project id', parseProjectId)
    .option('--json', 'print JSON')
    .option('--local', 'a `baton run` project under BATON_HOME instead of Redis (needs the id)')
    .action(async (id: string | undefined, options: { json?: boolean; local?: boolean }) => {
      if (options.local === true && id === undefined) {
        throw new CliError('usage', 'baton status --local needs a project id');
      }
      await withProjects(options, async (projects) => {
        if (id !== undefined) {
          const project = await projects.requireProject(id, { diagnose: true });
          const sessions = await projects.listSessions(id);
          const deliveries = await projects.listWebhookDeliveries(id);
          const stuck = await projects.findStuck(project);
          // A `baton run` project has no webhooks and is never stuck (`null`, `[]`).
          process.stdout.write(
            options.json
              ? `${outputJson({ ...projectJson(project), stuck, sessionCommits: sessions.map(sessionJson), webhooks: deliveries }, 2)}\n`
              : describeProject(
                  terminalSafe(project),
                  terminalSafe(sessions),
                  terminalSafe(deliveries),
                  terminalSafe(stuck),
                ),
          );
          return;
        }
        // Without an id: the same rows, columns and JSON shape as `baton projects`.
        const rows = projectRows(await projects.listProjects());
        if (options.json) {
          process.stdout.write(`${outputJson(rows, 2)}\n`);
          return;
        }
        // Projects nothing runs and what is left of projects Redis lost, below the rows.
        const found = terminalSafe(await projects.findProblems());
        const problems = found.problems.flatMap((problem) => [
          `problem   ${problem.projectId}: ${problem.problem}`,
          `fix       ${problem.fix}`,
        ]);
        // A bound stopped the search: said, so an empty list is never taken for "nothing lost".
        if (found.incomplete !== null) problems.push(`note      ${found.incomplete}`);
        const tail = problems.length === 0 ? '' : `\n${problems.join('\n')}\n`;
        if (rows.length === 0 && !(await projects.hasDeploymentMarker())) {
          // An empty Redis that a worker never marked: new, or it lost its data.
          process.stdout.write(`no projects\n${NO_DEPLOYMENT_MARKER}\n${tail}`);
          return;
        }
        process.stdout.write(
          `${rows.length === 0 ? 'no projects\n' : `${renderProjectRows(terminalSafe(rows))}\n`}${tail}`,
        );
      });
    });
}
