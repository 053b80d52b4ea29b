import type { Command } from 'commander';
import { contextVariablesNotice, loadWorkerConfig, runUntilSignalled } from '@baton/worker';
import { CliError } from '../errors.js';
import { parsePort, parsePositiveInteger } from '../internal/argument-parsers.js';
import { toCommandFailure } from '../internal/remote-control.js';
import { warnUnknownVariables } from '../internal/environment.js';

interface WorkerOptions {
  concurrency?: number;
  port?: number;
  /** `--no-sandbox` sets it to false (`BATON_SANDBOX=off`). */
  sandbox?: boolean;
}

/** `baton worker`: run a worker process in the foreground (config from the environment). */
export function registerWorkerCommand(program: Command): void {
  program
    .command('worker')
    .description(
      'Run a worker: take sessions from Redis (REDIS_CLUSTER_NODES or REDIS_URL), run them, chain the next; Ctrl-C drains. See docs/workers.md for every variable.',
    )
    .option(
      '--concurrency <n>',
      'sessions run at once (BATON_CONCURRENCY, default 4)',
      parsePositiveInteger(1000),
    )
    .option(
      '--port <port>',
      '/metrics and /healthz port (BATON_HTTP_PORT, default 9464; 0 = any)',
      parsePort,
    )
    .option(
      '--no-sandbox',
      "run the agent's commands unsandboxed (explicit opt-out, same as BATON_SANDBOX=off; said in every session's events, status and the dashboard)",
    )
    .action(async (options: WorkerOptions) => {
      await warnUnknownVariables('worker');
      const env = { ...process.env };
      if (options.concurrency !== undefined) env.BATON_CONCURRENCY = String(options.concurrency);
      if (options.port !== undefined) env.BATON_HTTP_PORT = String(options.port);
      if (options.sandbox === false) env.BATON_SANDBOX = 'off';
      let config;
      try {
        config = loadWorkerConfig(env);
      } catch (error) {
        throw new CliError(
          'usage',
          (error instanceof Error ? error.message : String(error)).split('\n').join('; '),
        );
      }
      const contextNotice = contextVariablesNotice(env);
      if (contextNotice !== undefined) process.stderr.write(`baton worker: ${contextNotice}\n`);
      let drained: boolean;
      try {
        ({ drained } = await runUntilSignalled(config, {
          onStarted: (worker) => {
            if (worker.sandbox.kind === 'unsandboxed') {
              process.stderr.write(`baton worker: ${worker.sandbox.notice}\n`);
            }
          },
        }));
      } catch (error) {
        throw toCommandFailure(error);
      }
      if (!drained)
        throw new CliError(
          'internal',
          'shutdown grace period ran out; running sessions will resume on another worker',
        );
    });
}
