#!/usr/bin/env node
// Writes docs/cli.md from the `--help` text of every `baton` verb, read from the BUILT binary
// (apps/cli/dist/main.js), so the page can never say something the command does not.
//   node apps/cli/scripts/gen-cli-docs.mjs           regenerate docs/cli.md
//   node apps/cli/scripts/gen-cli-docs.mjs --check   exit 1 if docs/cli.md differs (used by a test)
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.resolve(here, '..');
const docsFile = path.resolve(cli, '../../docs/cli.md');

/** Every verb's help, in registration order (one process: the preload walks the command tree). */
function helpPages() {
  const output = execFileSync(
    process.execPath,
    [
      '--import',
      pathToFileURL(path.join(here, 'help-dump.mjs')).href,
      path.join(cli, 'dist/main.js'),
    ],
    {
      cwd: cli,
      encoding: 'utf8',
      // Help wraps at the terminal width: pin it (and keep colours and the environment out of it).
      env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', COLUMNS: '80' },
    },
  );
  return JSON.parse(output);
}

export function renderDocs() {
  const pages = helpPages();
  const anchor = (page) => page.path.join('-');
  const lines = [
    '# `baton` command reference',
    '',
    '<!-- Generated from `baton --help` by apps/cli/scripts/gen-cli-docs.mjs: do not edit by hand.',
    '     Regenerate with `node apps/cli/scripts/gen-cli-docs.mjs` after `pnpm --filter @baton/cli build`;',
    '     apps/cli/test/cli-docs.test.ts fails when this file and the help text differ. -->',
    '',
    'Every verb prints this text with `--help`. The environment variables are listed in',
    '[apps/cli/README.md](../apps/cli/README.md#environment); the exit codes, the same for every',
    'verb, are [below](#exit-codes).',
    '',
    ...pages.map((page) => `- [\`${page.path.join(' ')}\`](#${anchor(page)})`),
    '',
  ];
  // The one exit-code table, as `baton --help` prints it.
  const root = pages.find((page) => page.path.length === 1)?.help ?? '';
  const table = root.slice(root.indexOf('Exit codes (the same for every verb):'));
  if (table !== root) lines.push('## Exit codes', '', '```text', table.trimEnd(), '```', '');
  for (const page of pages) {
    lines.push(`## ${page.path.join(' ')}`, '', '```text', page.help.trimEnd(), '```', '');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}

const isMain =
  process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const generated = renderDocs();
  if (process.argv.includes('--check')) {
    let current = '';
    try {
      current = readFileSync(docsFile, 'utf8');
    } catch {
      // missing: reported as a difference below
    }
    if (current !== generated) {
      const have = current.split('\n');
      const want = generated.split('\n');
      const index = want.findIndex((line, position) => line !== have[position]);
      process.stderr.write(
        `docs/cli.md is out of date (first difference at line ${index + 1}: expected ${JSON.stringify(want[index] ?? '')}, found ${JSON.stringify(have[index] ?? '')}); regenerate it with: node apps/cli/scripts/gen-cli-docs.mjs\n`,
      );
      process.exit(1);
    }
    process.stdout.write('docs/cli.md matches the --help text.\n');
  } else {
    writeFileSync(docsFile, generated);
    process.stdout.write(`wrote ${path.relative(process.cwd(), docsFile)}\n`);
  }
}
