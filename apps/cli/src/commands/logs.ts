import type { Command } from 'commander';
import type { ProjectEvent } from '@baton/projects/schema';
import { parseProjectId } from '../internal/argument-parsers.js';
import { createLiveView, shouldUseColor } from '../internal/live-view.js';
import { withProjects, type ProjectAccess } from '../internal/project-access.js';
import { COST_HELP } from '../internal/cost-help.js';
import { outputJson } from '../internal/terminal-text.js';

/** A project in one of these states gets no more sessions unless resumed: `-f` stops there. */
function isTerminalStatus(status: unknown): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

interface LogsOptions {
  follow?: boolean;
  json?: boolean;
  local?: boolean;
}

/** Where printed events go: JSON lines, or the live view. */
function createPrinter(options: LogsOptions) {
  if (options.json === true) {
    return {
      print: (event: ProjectEvent) => process.stdout.write(`${outputJson(event)}\n`),
      close: () => undefined,
      seed: () => undefined,
    };
  }
  const tty = process.stdout.isTTY === true;
  const view = createLiveView({
    write: (text) => process.stdout.write(text),
    color: shouldUseColor(process.stdout),
    // The status line is redrawn in place only while following live on a terminal.
    statusLine: tty && options.follow === true,
    columns: process.stdout.columns,
  });
  return {
    print: (event: ProjectEvent) => view.onEvent(event),
    close: () => view.close(),
    seed: (features: { passing: number; total: number }) => view.seed({ features }),
  };
}

/** Resolves when SIGINT/SIGTERM arrives; `stop()` removes the handlers. */
function interruption() {
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  return {
    signal: controller.signal,
    stop() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/**
 * Prints the project's events; with `-f` keeps printing new ones until the project ends or the
 * user stops us. The same for Redis and `BATON_HOME`: both logs hold the chain's events.
 */
async function printLogs(projects: ProjectAccess, id: string, options: LogsOptions): Promise<void> {
  const project = await projects.requireProject(id);
  const printer = createPrinter(options);
  printer.seed({
    passing: project.counters.featuresPassing,
    total: project.counters.featuresTotal,
  });
  // A finished project gets no new events: its history is all there is.
  const follow = options.follow === true && !isTerminalStatus(project.status);
  const stop = follow ? interruption() : undefined;
  try {
    const events = projects.events(project, {
      follow,
      signal: stop?.signal ?? new AbortController().signal,
    });
    for await (const { event, live } of events) {
      printer.print(event);
      if (live && event.type === 'project-status' && isTerminalStatus(event.to)) break;
    }
  } finally {
    stop?.stop();
    printer.close();
  }
}

/** `baton logs ID [-f] [--json] [--local]`. */
export function registerLogsCommand(program: Command): void {
  program
    .command('logs')
    .description(
      "Print a project's events (sessions, turns, tool calls, memory changes) as readable lines or JSON lines.",
    )
    .argument('<id>', 'project id', parseProjectId)
    .option('-f, --follow', 'keep printing new events live until the project ends or Ctrl-C')
    .option(
      '--json',
      'one JSON event per line, decoded (the shape the dashboard API sends; unreadable entries as type unknown)',
    )
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .addHelpText(
      'after',
      `${COST_HELP}\n\nReads REDIS_CLUSTER_NODES or REDIS_URL (default redis://127.0.0.1:6379) and BATON_PREFIX unless --local.`,
    )
    .action(async (id: string, options: LogsOptions) => {
      await withProjects(options, (projects) => printLogs(projects, id, options));
    });
}
