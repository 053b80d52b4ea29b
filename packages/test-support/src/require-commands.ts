import { execFileSync } from 'node:child_process';

/**
 * Fails a suite's global setup, in one line naming the install command, when a program its tests
 * run is not on PATH (`commands`: program name -> the Debian package that has it). Under
 * `CI=true` that is an error, so no suite passes or skips without what it tests; elsewhere a
 * warning, and the tests that need the program fail on their own.
 */
export function requireCommands(commands: Record<string, string>): void {
  const missing = Object.keys(commands).filter((command) => {
    try {
      execFileSync('sh', ['-c', 'command -v "$1"', 'sh', command], { stdio: 'ignore' });
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((command) => commands[command]))].join(' ');
  const message = `missing on PATH: ${missing.join(', ')}: install with \`apt-get install -y ${packages}\` (or run \`bash scripts/test-prerequisites.sh\`)`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(message);
}
