import type { Command } from 'commander';
import type { DashboardServer } from '@baton/dashboard';
import type { RunningWorker } from '@baton/worker';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
import { parseNonEmpty, parsePort } from '../internal/argument-parsers.js';
import { batonHome } from '../internal/project-home.js';
import { discoverRedis, type DiscoveredRedis } from '../internal/redis-discovery.js';
import { toCommandFailure } from '../internal/remote-control.js';
import { warnUnknownVariables } from '../internal/environment.js';

/** `@baton/dashboard`'s defaults, spelled out so `--help` need not load the dashboard package. */
const DEFAULT_DASHBOARD_HOST = '127.0.0.1';
const DEFAULT_DASHBOARD_PORT = 8787;

interface UpOptions {
  port: number;
  host: string;
  json?: boolean;
  /** `--no-sandbox` sets it to false: the operator's explicit opt-out (`BATON_SANDBOX=off`). */
  sandbox?: boolean;
}

/** What `baton up --json` prints once everything runs (then `{ "type": "stopped", ... }` at exit). */
interface UpReady {
  type: 'ready';
  dashboardUrl: string;
  /** Where Redis is, without secrets: a URL, or `redis cluster host:port,...` for a Cluster. */
  redisUrl: string;
  /**
   * `env` (REDIS_CLUSTER_NODES or REDIS_URL), `probe` (a Redis already on 127.0.0.1:6379) or
   * `child` (started by baton).
   */
  redisSource: DiscoveredRedis['source'];
  redisDataDirectory: string | null;
  redisPid: number | null;
  metricsUrl: string | null;
  simulator: boolean;
  /** Where the worker's sessions run commands: `bubblewrap`, or `off` (opted out, or the simulator without a sandbox). */
  sandbox: 'bubblewrap' | 'off';
}

/** The environment the in-process worker reads: our Redis, quiet logs, metrics on a free port. */
function workerEnvironment(redis: Record<string, string>, home: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, BATON_HOME: home };
  // Exactly the Redis `up` found: a REDIS_CLUSTER_NODES left over would take precedence.
  delete env.REDIS_CLUSTER_NODES;
  delete env.REDIS_URL;
  Object.assign(env, redis);
  const key = env.ANTHROPIC_API_KEY?.trim();
  if ((key === undefined || key === '') && (env.BATON_MODEL ?? '') === '') {
    env.BATON_SIMULATOR = '1';
  }
  // The worker's pino logs (on stderr under `up`): keep them to errors unless the user asks for more.
  env.LOG_LEVEL ??= 'error';
  // A fixed metrics port would clash with a second `up` or a separate worker.
  env.BATON_HTTP_PORT ??= '0';
  return env;
}

/** The first SIGINT/SIGTERM resolves `signal`; the next one stops Redis and exits 130 at once. */
function watchSignals(redis: () => DiscoveredRedis | undefined) {
  let resolve: (signal: NodeJS.Signals) => void = () => undefined;
  const signal = new Promise<NodeJS.Signals>((done) => (resolve = done));
  let received = false;
  const onSignal = (name: NodeJS.Signals) => {
    if (!received) {
      received = true;
      resolve(name);
      return;
    }
    void (redis()?.stop() ?? Promise.resolve()).finally(() => process.exit(EXIT_CODES.cancelled));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    signal,
    dispose() {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

async function up(options: UpOptions): Promise<number> {
  const json = options.json === true;
  // Loaded on use so other verbs and `--help` start fast.
  const {
    closeRedisConnection,
    createBatonControl,
    createRedisConnection,
    createSessionQueue,
    describeRedisTarget,
    producerConnectionOptions,
    redisTargetEnvironment,
  } = await import('@baton/projects');
  const { createLogger, isWorkerError, loadWorkerConfig, startWorkerFromConfig } =
    await import('@baton/worker');
  const { createDashboardLogger, createDashboardServer, isDashboardError } =
    await import('@baton/dashboard');
  const say = (line: string) => process.stderr.write(`${line}\n`);
  const home = batonHome();
  // Signals are caught from the start: one during startup stops right after it; a second one
  // stops at once (the Redis child included).
  const stopping = watchSignals(() => redis);
  let redis: DiscoveredRedis | undefined;
  try {
    redis = await discoverRedis({ home, log: json ? () => undefined : say });
  } catch (error) {
    stopping.dispose();
    throw error;
  }
  const opened: Array<() => Promise<unknown>> = [() => redis.stop()];
  const closeAll = async () => {
    for (const close of opened.reverse()) await close().catch(() => undefined);
    opened.length = 0;
  };

  let worker: RunningWorker;
  let dashboard: DashboardServer;
  let simulator: boolean;
  try {
    const config = (() => {
      try {
        const env = workerEnvironment(redisTargetEnvironment(redis.target), home);
        if (options.sandbox === false) env.BATON_SANDBOX = 'off';
        return loadWorkerConfig(env);
      } catch (error) {
        if (isWorkerError(error) && error.code === 'invalid_config') {
          throw new CliError('usage', error.message.split('\n').join('; '));
        }
        throw error;
      }
    })();
    simulator = config.simulator;
    worker = await startWorkerFromConfig(config, {
      connectTimeoutMs: 5_000,
      // stdout is up's own (`--json`: JSON lines only); the worker's log lines go to stderr.
      logger: createLogger({
        level: config.logLevel,
        workerId: config.workerId,
        destination: process.stderr,
      }),
    });
    opened.push(() => worker.shutdown());

    const control = createBatonControl({ target: config.redis, prefix: config.prefix });
    opened.push(() => control.close());
    const queueConnection = createRedisConnection(config.redis, producerConnectionOptions());
    queueConnection.on('error', () => undefined);
    opened.push(() => Promise.resolve(closeRedisConnection(queueConnection)));
    const queue = createSessionQueue({ connection: queueConnection, keys: control.keys });
    opened.push(() => queue.close());
    dashboard = await createDashboardServer({
      control,
      queue,
      // Login sessions (with BATON_DASHBOARD_TOKEN) live in Redis beside the projects.
      redis: queueConnection,
      host: options.host,
      port: options.port,
      // Like the worker's: quiet unless LOG_LEVEL asks for more (the terminal shows the live view).
      logger: createDashboardLogger({ level: process.env.LOG_LEVEL ?? 'error' }),
    });
    opened.push(() => dashboard.close());
  } catch (error) {
    await closeAll();
    stopping.dispose();
    if (isDashboardError(error)) throw new CliError('usage', `${error.message}.`);
    throw toCommandFailure(error);
  }

  const ready: UpReady = {
    type: 'ready',
    dashboardUrl: dashboard.url,
    redisUrl: describeRedisTarget(redis.target),
    redisSource: redis.source,
    redisDataDirectory: redis.dataDirectory,
    redisPid: redis.pid,
    metricsUrl: worker.httpPort === null ? null : `http://127.0.0.1:${worker.httpPort}/metrics`,
    simulator,
    sandbox: worker.sandbox.kind === 'sandboxed' ? 'bubblewrap' : 'off',
  };
  // Said whatever the output mode: an unsandboxed worker is never quiet about it.
  if (worker.sandbox.kind === 'unsandboxed') say(`baton up: ${worker.sandbox.notice}`);
  if (json) {
    process.stdout.write(`${JSON.stringify(ready)}\n`);
  } else {
    const where = {
      env: redis.target.kind === 'cluster' ? 'REDIS_CLUSTER_NODES' : 'REDIS_URL',
      probe: 'found on this machine',
      child: `started by baton, data in ${redis.dataDirectory ?? ''}`,
    }[redis.source];
    if (simulator)
      say(
        'No ANTHROPIC_API_KEY set: sessions use the built-in model simulator (set the key for real runs).',
      );
    say(`Redis ${ready.redisUrl} (${where})`);
    if (ready.metricsUrl !== null) say(`Worker metrics ${ready.metricsUrl}`);
    process.stdout.write(`Baton is up. Dashboard: ${dashboard.url}\n`);
    say('Queue work with `baton enqueue`; press Ctrl-C to stop.');
  }

  // Stay up until SIGINT/SIGTERM.
  const signal = await stopping.signal;
  if (json) process.stdout.write(`${JSON.stringify({ type: 'stopping', signal })}\n`);
  else
    say(`${signal}: stopping the dashboard, draining the worker (signal again to stop at once)...`);
  // Dashboard first (no new work comes in), then the worker drains, then Redis goes last.
  let drained: boolean;
  try {
    await dashboard.close();
    drained = (await worker.shutdown()).drained;
  } finally {
    await closeAll();
  }
  stopping.dispose();
  if (json) process.stdout.write(`${JSON.stringify({ type: 'stopped', drained })}\n`);
  else say(drained ? 'Stopped.' : 'Stopped (running sessions were cut off after the grace time).');
  return EXIT_CODES.ok;
}

/** `baton up [--port P] [--host H] [--json]`. */
export function registerUpCommand(program: Command): void {
  program
    .command('up')
    .description(
      'Run a worker and the dashboard in this process on Redis (REDIS_CLUSTER_NODES or REDIS_URL, else 127.0.0.1:6379 if it answers, else a redis-server child) until Ctrl-C.',
    )
    .option(
      '--port <port>',
      `dashboard port (0 = any free port)`,
      parsePort,
      DEFAULT_DASHBOARD_PORT,
    )
    .option(
      '--host <host>',
      'dashboard interface; anything but loopback needs BATON_DASHBOARD_TOKEN',
      parseNonEmpty,
      DEFAULT_DASHBOARD_HOST,
    )
    .option(
      '--json',
      'print { "type": "ready", dashboardUrl, redisUrl, ... } once up, { "type": "stopping", signal } on the first Ctrl-C and { "type": "stopped" } at exit',
    )
    .option(
      '--no-sandbox',
      "run the agent's commands unsandboxed (explicit opt-out, same as BATON_SANDBOX=off; said in every session's events, status and the dashboard)",
    )
    .addHelpText(
      'after',
      [
        '',
        'Redis: REDIS_CLUSTER_NODES (a Cluster) or REDIS_URL is used as is when set. Otherwise',
        'redis://127.0.0.1:6379 is probed (BATON_REDIS_PROBE_URL changes the address probed),',
        'and if nothing answers a redis-server',
        'child starts on a free loopback port with append-only persistence under BATON_HOME/redis/;',
        'it stops with baton. Without ANTHROPIC_API_KEY the built-in model simulator runs the sessions.',
      ].join('\n'),
    )
    .action(async (options: UpOptions) => {
      await warnUnknownVariables('up');
      process.exitCode = await up(options);
    });
}
