import type { Command } from 'commander';
import type { ModelSim } from '@baton/model-sim';
import { CliError } from '../errors.js';
import { parseNonEmpty, parsePort } from '../internal/argument-parsers.js';

interface SimOptions {
  port: number;
  host?: string;
  faults?: string;
}

/** `baton sim`: the model simulator in the foreground until Ctrl-C. */
export function registerSimCommand(program: Command): void {
  program
    .command('sim')
    .description(
      'Run the offline model simulator (Messages API subset) in the foreground; point ANTHROPIC_BASE_URL at it.',
    )
    .option('--port <port>', 'port to listen on (0 = any free port)', parsePort, 8790)
    .option('--host <host>', 'interface to bind (default 127.0.0.1)', parseNonEmpty)
    .option('--faults <json>', 'faults to inject, e.g. {"rateLimitOn":[1]}')
    .action(async (options: SimOptions) => {
      // Loaded on use, so `--help` and argument errors stay fast.
      const { ModelSimError, runModelSimFromCli } = await import('@baton/model-sim');
      const argv = ['--port', String(options.port)];
      if (options.host !== undefined) argv.push('--host', options.host);
      if (options.faults !== undefined) argv.push('--faults', options.faults);
      let sim: ModelSim;
      try {
        sim = await runModelSimFromCli(argv, {
          log: (line) => process.stdout.write(`${line}\n`),
        });
      } catch (error) {
        if (error instanceof ModelSimError) throw new CliError('usage', error.message);
        if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          throw new CliError('usage', `port ${options.port} is in use; pick another with --port.`);
        }
        throw error;
      }
      process.stdout.write('Press Ctrl-C to stop.\n');
      // The simulator closes itself on SIGINT/SIGTERM; wait for that.
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await sim.close();
    });
}
