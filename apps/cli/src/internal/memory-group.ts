import type { Command } from 'commander';

/**
 * The `memory` command group. `commands/memory.ts` creates it (with `ls` and `cat`); subcommands
 * registered from other files attach to the same group, and create it only if it is missing so
 * each file also works on its own (e.g. in a test).
 */
export function memoryGroup(program: Command): Command {
  return (
    program.commands.find((command) => command.name() === 'memory') ??
    program.command('memory').description("Read and change a project's memory (/memories).")
  );
}
