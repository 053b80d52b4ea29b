import { appendFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { defineContextConfig, type ContextPresetName } from '@baton/context-config';
import { createFileSystemStore, memoryStoreLimits } from '@baton/core';
import { allFeaturesPass, readFeatures, runSession, type SessionResult } from '@baton/session';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { featureBar, formatUsd } from './format.js';
import { createLiveView, shouldUseColor, type ViewEvent } from './live-view.js';
import { connectModel } from './model.js';
import {
  batonHome,
  deriveProjectId,
  prepareWorkspace,
  projectPaths,
  readProject,
  writeProject,
  addSessionUsage,
  type ProjectRecord,
} from './project-home.js';

/** Parsed options of `baton run`. */
export interface RunOptions {
  goal?: string;
  goalFile?: string;
  workspace?: string;
  sessions: number;
  project?: string;
  model?: string;
  preset: ContextPresetName;
  budgetUsd?: number;
  maxTurns?: number;
  json?: boolean;
}

async function readGoal(options: RunOptions): Promise<string | undefined> {
  if (options.goal !== undefined && options.goalFile !== undefined) {
    throw new CliError('usage', 'use either --goal or --goal-file, not both.');
  }
  if (options.goalFile !== undefined) {
    const text = await readFile(options.goalFile, 'utf8').catch((error: NodeJS.ErrnoException) => {
      throw new CliError(
        'usage',
        `cannot read --goal-file ${options.goalFile}: ${error.code === 'ENOENT' ? 'no such file' : (error.code ?? error.message)}.`,
      );
    });
    if (text.trim() === '')
      throw new CliError('usage', `--goal-file ${options.goalFile} is empty.`);
    return text;
  }
  return options.goal;
}

/** Find or create the project record for this run. */
async function openProject(options: RunOptions, home: string): Promise<ProjectRecord> {
  const goal = await readGoal(options);
  if (options.project !== undefined) {
    const existing = await readProject(projectPaths(home, options.project));
    if (existing !== null) {
      if (goal !== undefined && goal.trim() !== existing.goal.trim()) {
        throw new CliError(
          'usage',
          `project ${existing.id} already has a goal; omit --goal/--goal-file to continue it.`,
        );
      }
      if (
        options.workspace !== undefined &&
        path.resolve(options.workspace) !== existing.workspace
      ) {
        throw new CliError(
          'usage',
          `project ${existing.id} already uses the workspace ${existing.workspace}.`,
        );
      }
      return existing;
    }
    if (goal === undefined) {
      throw new CliError(
        'usage',
        `no project ${options.project} under ${home}; give --goal or --goal-file to start it.`,
      );
    }
  }
  if (goal === undefined)
    throw new CliError(
      'usage',
      'give --goal TEXT or --goal-file FILE (or --project ID to continue a project).',
    );
  const id =
    options.project ??
    deriveProjectId(
      options.goalFile !== undefined
        ? path.basename(options.goalFile).replace(/\.[^.]+$/, '')
        : (goal.split('\n')[0] ?? ''),
    );
  const paths = projectPaths(home, id);
  const record: ProjectRecord = {
    id,
    goal,
    workspace: options.workspace !== undefined ? path.resolve(options.workspace) : paths.workspace,
    createdAt: new Date().toISOString(),
    sessions: 0,
    running: false,
  };
  await writeProject(paths, record);
  return record;
}

function exitCodeFor(result: SessionResult, budgetLeft: number | undefined): number | undefined {
  switch (result.outcome) {
    case 'cancelled':
      return EXIT_CODES.cancelled;
    case 'refused':
      return EXIT_CODES.refused;
    case 'failed':
      return EXIT_CODES.sessionFailed;
    default:
      if (result.stopReason === 'max_usd' || (budgetLeft !== undefined && budgetLeft <= 0))
        return EXIT_CODES.budgetExhausted;
      return undefined;
  }
}

/** Run sessions of one project until every feature passes; returns the exit code. */
export async function runProject(options: RunOptions): Promise<number> {
  const home = batonHome();
  const project = await openProject(options, home);
  const paths = projectPaths(home, project.id);
  if (options.workspace !== undefined) {
    const info = await stat(project.workspace).catch(() => null);
    if (info !== null && !info.isDirectory())
      throw new CliError('usage', `--workspace ${options.workspace} is not a directory.`);
  }
  // Only the default workspace is made a git repository; a user's own directory is left as it is.
  await prepareWorkspace(project.workspace, project.workspace === paths.workspace);
  // The store enforces the memory quotas atomically, so the handler skips its own usage() check.
  const store = await createFileSystemStore({
    root: paths.memories,
    limits: memoryStoreLimits(),
  });
  const context = defineContextConfig({ preset: options.preset });
  const json = options.json === true;
  const output = createLiveView({
    write: (text) => process.stdout.write(text),
    color: !json && shouldUseColor(process.stdout),
    statusLine: !json && process.stdout.isTTY === true,
    timestamps: false,
    ...(process.stdout.columns === undefined ? {} : { columns: process.stdout.columns }),
  });
  const say = (text: string) => (json ? process.stderr.write(`${text}\n`) : output.line(text));
  const connection = await connectModel({
    ...(options.model === undefined ? {} : { model: options.model }),
  });
  say(connection.notice);

  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    interrupts += 1;
    if (interrupts === 1) {
      say(
        'Ctrl-C: ending the session cleanly (end-of-session turn). Press Ctrl-C again to quit at once.',
      );
      controller.abort();
    } else {
      process.exit(EXIT_CODES.cancelled);
    }
  };
  process.on('SIGINT', onSigint);
  const continueHint = `Continue with: baton run --project ${project.id}${process.env.BATON_HOME ? ` (BATON_HOME=${process.env.BATON_HOME})` : ''}`;

  let exitCode: number = EXIT_CODES.featuresRemaining;
  let budgetLeft = options.budgetUsd;
  let totalUsd = 0;
  try {
    say(`Project ${project.id} · workspace ${project.workspace} · memory ${paths.memories}`);
    for (let index = 0; index < options.sessions; index += 1) {
      const features = await readFeatures(store);
      if (features !== null && allFeaturesPass(features)) break;
      const kind = features === null ? 'init' : 'resume';
      const interrupted =
        project.running || project.lastOutcome === 'cancelled' || project.lastOutcome === 'failed';
      project.sessions += 1;
      project.running = true;
      await writeProject(paths, project);
      const result = await runSession({
        project: { id: project.id, goal: project.goal },
        kind,
        store,
        workspace: project.workspace,
        client: connection.client,
        model: connection.model,
        context,
        sessionNumber: project.sessions,
        interrupted,
        memoryQuotaEnforcement: 'store',
        signal: controller.signal,
        budgets: {
          ...(budgetLeft === undefined ? {} : { maxUsd: budgetLeft }),
          ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
        },
        onEvent: (event) => {
          // Synchronous so lines stay in event order; `baton logs --local -f` follows this file.
          const line = JSON.stringify(event);
          appendFileSync(paths.events, `${line}\n`, { mode: 0o600 });
          if (json) process.stdout.write(`${line}\n`);
          // The view reads events as plain JSON records, the same shape `baton logs` gets from Redis.
          else output.onEvent(event as unknown as ViewEvent);
        },
      });
      project.running = false;
      project.lastOutcome = result.outcome;
      project.totals = addSessionUsage(project.totals, result.usage);
      await writeProject(paths, project);
      totalUsd += result.usage.costUsd;
      if (budgetLeft !== undefined) budgetLeft -= result.usage.costUsd;
      const stop = controller.signal.aborted
        ? EXIT_CODES.cancelled
        : exitCodeFor(result, budgetLeft);
      if (stop !== undefined) {
        exitCode = stop;
        break;
      }
      if (kind === 'init' && (await readFeatures(store)) === null) {
        say('The init session wrote no valid /memories/features.json; stopping.');
        exitCode = EXIT_CODES.sessionFailed;
        break;
      }
    }
    const finalFeatures = await readFeatures(store);
    if (allFeaturesPass(finalFeatures)) exitCode = EXIT_CODES.ok;
    const counts = {
      passing: finalFeatures?.filter((feature) => feature.passes).length ?? 0,
      total: finalFeatures?.length ?? 0,
    };
    const summary = {
      type: 'run-end',
      projectId: project.id,
      exitCode,
      features: counts,
      sessions: project.sessions,
      costUsd: Number(totalUsd.toFixed(6)),
    };
    if (json) process.stdout.write(`${JSON.stringify(summary)}\n`);
    else say(`Features ${featureBar(counts)} · ${formatUsd(totalUsd)} this run · exit ${exitCode}`);
    if (exitCode !== EXIT_CODES.ok)
      say(exitCode === EXIT_CODES.cancelled ? `Stopped. ${continueHint}` : continueHint);
    return exitCode;
  } finally {
    output.close();
    process.off('SIGINT', onSigint);
    await store.close();
    await connection.sim?.close();
  }
}
