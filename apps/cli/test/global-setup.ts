import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const cli = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(cli, '../..');

function build(directory: string): void {
  try {
    execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: directory, stdio: 'pipe' });
  } catch (error) {
    // tsc still emits JavaScript on type errors; type errors are the typecheck task's job, so
    // only a build that produced no entry point stops the tests.
    const output = String((error as { stdout?: unknown }).stdout ?? '');
    if (
      !existsSync(path.join(directory, 'dist/main.js')) &&
      !existsSync(path.join(directory, 'dist/index.js'))
    )
      throw error;
    console.warn(
      `tsc reported errors while building ${path.relative(root, directory)}:\n${output}`,
    );
  }
}

/**
 * The CLI tests spawn the built binary (`node dist/main.js`), as users and CI do. `turbo test`
 * builds the dependencies (`^build`) but not the CLI itself, so build it here; dependencies are
 * built only when their dist is missing (a standalone `npx vitest run`).
 */
export default function setup(): void {
  for (const dependency of [
    'packages/core',
    'packages/context-config',
    'packages/model-sim',
    'packages/session',
  ]) {
    if (!existsSync(path.join(root, dependency, 'dist/index.js')))
      build(path.join(root, dependency));
  }
  build(cli);
}
