import type { Command } from 'commander';
import { contextVariablesNotice, loadWorkerConfig, startWorkerFromConfig } from '@baton/worker';
import { CliError } from '../errors.js';
import { EXIT_CODES } from '../exit-codes.js';
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
      // Signals are heard from before the start: the "worker started" line is written during it,
      // and a SIGTERM right after it must drain, not kill (a second one exits at once).
      let signalDuringStart = false;
      const duringStart = () => {
        if (signalDuringStart) process.exit(EXIT_CODES.cancelled);
        signalDuringStart = true;
      };
      process.on('SIGINT', duringStart);
      process.on('SIGTERM', duringStart);
      let running;
      try {
        running = await startWorkerFromConfig(config);
      } catch (error) {
        throw toCommandFailure(error);
      } finally {
        process.off('SIGINT', duringStart);
        process.off('SIGTERM', duringStart);
      }
      const worker = running;
      if (worker.sandbox.kind === 'unsandboxed') {
        process.stderr.write(`baton worker: ${worker.sandbox.notice}\n`);
      }
      const drained = await new Promise<boolean>((resolve) => {
        let signals = 0;
        const onSignal = () => {
          signals += 1;
          // A second Ctrl-C stops at once, with the same code as in every other verb.
          if (signals > 1) process.exit(EXIT_CODES.cancelled);
          worker.shutdown().then(
            (result) => resolve(result.drained),
            () => resolve(false),
          );
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
        if (signalDuringStart) onSignal();
      });
      if (!drained)
        throw new CliError(
          'internal',
          'shutdown grace period ran out; running sessions will resume on another worker',
        );
    });
}
