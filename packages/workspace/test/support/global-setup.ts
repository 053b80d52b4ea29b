import { requireCommands } from '@baton/test-support';

/**
 * The sandbox suites run an agent's everyday tools inside the sandbox and watch its processes
 * from outside; without them a fresh machine would fail them one by one with `command not found`.
 */
export default function setup(): void {
  requireCommands({
    git: 'git',
    bwrap: 'bubblewrap',
    socat: 'socat',
    python3: 'python3',
    make: 'make',
    cc: 'gcc',
    pgrep: 'procps',
  });
}
