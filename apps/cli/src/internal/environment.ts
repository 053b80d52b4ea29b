import { CONTEXT_ENV_VARS } from '@baton/context-config';

/**
 * The `BATON_*` variables the CLI itself reads (each reader takes its name from here). The
 * worker's, the dashboard's and the context config's are declared in their own packages.
 */
export const CLI_ENV_VARIABLES = {
  /** Where local projects, clones and the Redis child live. */
  home: 'BATON_HOME',
  /** Key prefix with a `{hash tag}`, shared with the workers. */
  prefix: 'BATON_PREFIX',
  /** Model id, or `sim`. */
  model: 'BATON_MODEL',
  /** Model a session continues on when its model stays overloaded (`baton run`). */
  fallbackModel: 'BATON_FALLBACK_MODEL',
  /** `on`, `off` or a JSON policy. */
  sandbox: 'BATON_SANDBOX',
  /** Least time between two checkpoints after turns (`baton run`). */
  checkpointIntervalMs: 'BATON_CHECKPOINT_INTERVAL_MS',
  /** Files larger than this (bytes) are left out of checkpoints (`baton run`). */
  maxFileBytes: 'BATON_MAX_FILE_BYTES',
  /** `off`: no memory snapshots in git after checkpoints (`baton run`). */
  memorySnapshots: 'BATON_MEMORY_SNAPSHOTS',
  /** Where `baton up` looks for a running Redis. */
  redisProbeUrl: 'BATON_REDIS_PROBE_URL',
} as const;

/** Edit distance, so a typo is told the name it was probably meant to be. */
function distance(left: string, right: string): number {
  let previous = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let row = 1; row <= left.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= right.length; column += 1) {
      current[column] = Math.min(
        (previous[column] ?? 0) + 1,
        (current[column - 1] ?? 0) + 1,
        (previous[column - 1] ?? 0) + (left[row - 1] === right[column - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}

/**
 * One line per `BATON_*` variable in `env` that no part of Baton reads, naming the closest
 * known one: a misspelt variable is otherwise silently ignored.
 */
export function unknownVariableWarnings(env: NodeJS.ProcessEnv, known: Iterable<string>): string[] {
  const names = [...new Set(known)].sort();
  const warnings: string[] = [];
  for (const name of Object.keys(env).sort()) {
    if (!name.startsWith('BATON_') || names.includes(name)) continue;
    let closest = names[0] ?? '';
    for (const candidate of names) {
      if (distance(name, candidate) < distance(name, closest)) closest = candidate;
    }
    warnings.push(`unknown variable ${name} is ignored; did you mean ${closest}?`);
  }
  return warnings;
}

/**
 * Writes the typo guard's warnings for a long-running verb (`baton run`, `worker`, `up`,
 * `dashboard`) to stderr, one line each. The known names come from where each is read.
 */
export async function warnUnknownVariables(
  verb: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const cheap = [...Object.values(CONTEXT_ENV_VARS), ...Object.values(CLI_ENV_VARIABLES)];
  // The worker's and the dashboard's lists cost their packages' import (half a second): load
  // them only when a variable is not one of the CLI's or the context config's.
  if (unknownVariableWarnings(env, cheap).length === 0) return;
  const [{ WORKER_ENV_VARIABLES }, { DASHBOARD_ENV_VARIABLES }] = await Promise.all([
    import('@baton/worker'),
    import('@baton/dashboard'),
  ]);
  const known = [...cheap, ...WORKER_ENV_VARIABLES, ...Object.values(DASHBOARD_ENV_VARIABLES)];
  for (const warning of unknownVariableWarnings(env, known)) {
    process.stderr.write(`baton ${verb}: ${warning}\n`);
  }
}
