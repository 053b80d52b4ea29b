import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../scripts/gen-cli-docs.mjs',
);

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [script, ...args], (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr });
    });
  });
}

describe('docs/cli.md cannot drift from --help', () => {
  it('docs/cli.md is exactly the generated --help text of every verb', async () => {
    const result = await run(['--check']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  });

  it('every verb is documented with its exit codes', async () => {
    const { renderDocs } = (await import(script)) as { renderDocs: () => string };
    const docs = renderDocs();
    for (const verb of [
      'up',
      'logs',
      'projects',
      'memory history',
      'memory export',
      'memory import',
      'memory exec',
    ]) {
      const section = docs.split(`\n## baton ${verb}\n`)[1]?.split('\n## ')[0] ?? '';
      expect(section, `section for baton ${verb}`).toContain(`Usage: baton ${verb} [options]`);
      expect(section, `exit codes of baton ${verb}`).toContain('Exit codes: 0');
    }
  });
});
