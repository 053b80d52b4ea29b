import { ModelSimError } from './errors.js';
import { parseFaults } from './internal/faults.js';
import { startModelSim } from './server.js';
import type { ModelSim, ModelSimOptions } from './types.js';

export interface ModelSimCliOptions {
  /** Where the one-line banner goes. Default: console.log. */
  log?: (line: string) => void;
  /** Close the simulator on SIGINT/SIGTERM. Default true. */
  handleSignals?: boolean;
}

/**
 * Parses `[--port P] [--host H] [--faults JSON]` and starts the simulator, for `baton sim`.
 * Resolves with the running simulator; it stops on SIGINT/SIGTERM (or `close()`).
 */
export async function runModelSimFromCli(
  argv: readonly string[],
  cli: ModelSimCliOptions = {},
): Promise<ModelSim> {
  const options: ModelSimOptions = {};
  for (let index = 0; index < argv.length; index += 1) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === '--port' || flag === '-p') {
      const port = Number(value);
      if (value === undefined || !Number.isInteger(port) || port < 0 || port > 65_535) {
        throw new ModelSimError(
          'invalid_options',
          `--port needs a number from 0 to 65535, got ${value ?? 'nothing'}.`,
        );
      }
      options.port = port;
      index += 1;
    } else if (flag === '--host') {
      if (value === undefined) throw new ModelSimError('invalid_options', '--host needs a value.');
      options.host = value;
      index += 1;
    } else if (flag === '--faults') {
      if (value === undefined)
        throw new ModelSimError('invalid_options', '--faults needs a JSON object.');
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        throw new ModelSimError(
          'invalid_options',
          '--faults must be a JSON object, e.g. {"rateLimitOn":[1]}.',
        );
      }
      options.faults = parseFaults(parsed);
      index += 1;
    } else {
      throw new ModelSimError(
        'invalid_options',
        `Unknown option ${String(flag)}. Usage: baton sim [--port P] [--host H] [--faults JSON]`,
      );
    }
  }
  const sim = await startModelSim({ port: 8790, ...options });
  const log = cli.log ?? ((line: string) => console.log(line));
  log(
    `Baton model simulator listening on ${sim.url} (set ANTHROPIC_BASE_URL=${sim.url}; any API key works).`,
  );
  if (cli.handleSignals ?? true) {
    const stop = () => {
      void sim.close();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  }
  return sim;
}
