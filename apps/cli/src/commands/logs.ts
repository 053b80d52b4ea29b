import { open, stat } from 'node:fs/promises';
import type { Command } from 'commander';
import type { BatonControl, EventEntry } from '@baton/projects';
import { decodeProjectEventJson, type ProjectEvent } from '@baton/projects/schema';
import { CliError } from '../errors.js';
import { parseProjectId } from '../internal/argument-parsers.js';
import { projectNotFound } from '../internal/command-failure.js';
import { createLiveView, shouldUseColor } from '../internal/live-view.js';
import { requireLocalProject, type LocalProject } from '../internal/local-projects.js';
import { withControl } from '../internal/remote-control.js';
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
    ...(process.stdout.columns === undefined ? {} : { columns: process.stdout.columns }),
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

async function remoteLogs(id: string, options: LogsOptions): Promise<void> {
  await withControl(async (control: BatonControl) => {
    const project = await control.getProject(id);
    if (project === null) throw projectNotFound(id, 'on Redis (see `baton projects`)');
    const printer = createPrinter(options);
    printer.seed({
      passing: project.counters.featuresPassing,
      total: project.counters.featuresTotal,
    });
    let lastId: string | undefined;
    let finished = isTerminalStatus(project.status);
    // History first, page by page: everything the stream still holds.
    for (;;) {
      const page: EventEntry[] = await control.readEvents(id, {
        count: 500,
        ...(lastId === undefined ? {} : { fromId: lastId }),
      });
      for (const entry of page) {
        printer.print(entry.event);
        lastId = entry.id;
      }
      if (page.length < 500) break;
    }
    if (options.follow !== true || finished) {
      printer.close();
      return;
    }
    // Then live, with blocking reads, until the project ends or the user stops us.
    const stop = interruption();
    try {
      for await (const entry of control.followEvents(id, {
        fromId: lastId ?? '0-0',
        blockMs: 2_000,
        signal: stop.signal,
      })) {
        printer.print(entry.event);
        if (entry.event.type === 'project-status' && isTerminalStatus(entry.event.to)) {
          finished = true;
          break;
        }
      }
    } finally {
      stop.stop();
      printer.close();
    }
  });
}

/** Reads complete JSON lines from `file` starting at byte `offset`; returns the new offset. */
async function readLines(
  file: string,
  offset: number,
  onEvent: (event: ProjectEvent) => void,
): Promise<number> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    if (size <= offset) return offset;
    const buffer = Buffer.alloc(size - offset);
    await handle.read(buffer, 0, buffer.length, offset);
    const text = buffer.toString('utf8');
    const end = text.lastIndexOf('\n');
    if (end === -1) return offset;
    for (const line of text.slice(0, end).split('\n')) {
      // A torn or foreign line decodes as an unknown event that says so: the log reads on.
      if (line.trim() !== '') onEvent(decodeProjectEventJson(line));
    }
    return offset + Buffer.byteLength(text.slice(0, end + 1));
  } finally {
    await handle.close();
  }
}

async function localLogs(id: string, options: LogsOptions): Promise<void> {
  const project: LocalProject = await requireLocalProject(id);
  if ((await stat(project.eventsFile).catch(() => null)) === null) {
    throw new CliError(
      'usage',
      `local project ${id} has no event log (${project.eventsFile}): \`baton run\` prints events as it runs; use \`baton run --json\` to keep them.`,
    );
  }
  const printer = createPrinter(options);
  let offset = await readLines(project.eventsFile, 0, printer.print);
  if (options.follow !== true) {
    printer.close();
    return;
  }
  const stop = interruption();
  try {
    // A local log is a plain file with no blocking read: check it for new lines four times a second.
    while (!stop.signal.aborted) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 250);
        stop.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
      offset = await readLines(project.eventsFile, offset, printer.print);
    }
  } finally {
    stop.stop();
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
      if (options.local === true) await localLogs(id, options);
      else await remoteLogs(id, options);
    });
}
