import path from 'node:path';
import type { Command } from 'commander';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { parseNonEmpty, parsePort } from '../internal/argument-parsers.js';
import { batonHome } from '../internal/project-home.js';
import {
  openControl,
  redisTargetFromEnvironment,
  toCommandFailure,
} from '../internal/remote-control.js';
import { warnUnknownVariables } from '../internal/environment.js';

/** `@baton/dashboard`'s defaults, spelled out so `--help` need not load the dashboard package. */
const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
const DEFAULT_DASHBOARD_PORT = 8787;

interface DashboardOptions {
  host: string;
  port: number;
  json?: boolean;
}

async function serveDashboard(options: DashboardOptions): Promise<number> {
  const say = (line: string) => process.stderr.write(`${line}\n`);
  // Loaded on use so other verbs and `--help` start fast.
  const {
    closeRedisConnection,
    createRedisConnection,
    createSessionQueue,
    producerConnectionOptions,
  } = await import('@baton/projects');
  const { createDashboardServer, isDashboardError } = await import('@baton/dashboard');
  const target = await redisTargetFromEnvironment();
  const control = await openControl();
  const opened: Array<() => Promise<unknown>> = [() => control.close()];
  const closeAll = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
    opened.length = 0;
  };

  let dashboardUrl: string;
  let close: () => Promise<void>;
  try {
    // Fail with one line now if Redis is down, rather than on the first page load.
    await control.queueCounts();
    const queueConnection = createRedisConnection(target, producerConnectionOptions());
    queueConnection.on('error', () => undefined);
    opened.push(() => Promise.resolve(closeRedisConnection(queueConnection)));
    const queue = createSessionQueue({ connection: queueConnection, keys: control.keys });
    opened.push(() => queue.close());
    const server = await createDashboardServer({
      control,
      queue,
      // Login sessions (with BATON_DASHBOARD_TOKEN) live in Redis beside the projects.
      redis: queueConnection,
      host: options.host,
      port: options.port,
    });
    opened.push(() => server.close());
    dashboardUrl = server.url;
    close = () => server.close();
  } catch (error) {
    await closeAll();
    if (isDashboardError(error)) throw new CliError('usage', `${error.message}.`);
    throw toCommandFailure(error);
  }

  if (options.json) {
    process.stdout.write(`${JSON.stringify({ type: 'ready', url: dashboardUrl })}\n`);
  } else {
    process.stdout.write(`Dashboard: ${dashboardUrl}\n`);
    say(
      `Reading projects from Redis; workers run them (baton worker, or baton up for both). Workspaces default to ${path.join(batonHome(), 'workspaces')}. Press Ctrl-C to stop.`,
    );
  }

  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await close();
  await closeAll();
  if (options.json) process.stdout.write(`${JSON.stringify({ type: 'stopped' })}\n`);
  return EXIT_CODES.ok;
}

/** `baton dashboard [--host H] [--port P] [--json]`: the web dashboard alone, for workers running elsewhere. */
export function registerDashboardCommand(program: Command): void {
  program
    .command('dashboard')
    .description(
      'Serve the web dashboard (projects, progress logs, checklists, sessions, memory, queues) for projects on Redis (REDIS_CLUSTER_NODES or REDIS_URL) until Ctrl-C.',
    )
    .option(
      '--host <host>',
      'interface to bind; anything but loopback needs BATON_DASHBOARD_TOKEN',
      parseNonEmpty,
      DEFAULT_DASHBOARD_HOST,
    )
    .option(
      '--port <port>',
      'port to listen on (0 = any free port)',
      parsePort,
      DEFAULT_DASHBOARD_PORT,
    )
    .option(
      '--json',
      'print { "type": "ready", "url": ... } once listening and { "type": "stopped" } at exit',
    )
    .addHelpText(
      'after',
      [
        '',
        'Binding to anything but 127.0.0.1/localhost/::1 requires BATON_DASHBOARD_TOKEN (16+ characters);',
        'then every request needs "Authorization: Bearer <token>" or a login through the /login form.',
      ].join('\n'),
    )
    .action(async (options: DashboardOptions) => {
      await warnUnknownVariables('dashboard');
      process.exitCode = await serveDashboard(options);
    });
}
