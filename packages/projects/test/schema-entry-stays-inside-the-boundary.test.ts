// The inner boundary of @baton/projects: `@baton/projects/schema` (the vocabulary: schemas,
// statuses, transitions, events and their decoder, chaining rules) loads no Redis, BullMQ,
// workspace, session or model SDK code, so CLI argument parsers and `--help` stay quick and the
// vocabulary can be read without the outer world. Two checks: the import graph of the source
// (type imports included, so a type cannot drag the outer world back in), and what a real Node
// process loads when it imports the entry.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const entry = path.join(packageDir, 'src/schema.ts');

/** Every package (or built-in) the vocabulary may import; anything else crosses the boundary. */
const ALLOWED_SPECIFIERS = new Set([
  'zod',
  'node:path',
  '@baton/context-config',
  '@baton/workspace/policy',
  '@baton/session/mcp-config',
]);

/** The outer world, as it shows in the paths of loaded modules. */
const OUTER_MODULES = [
  /node_modules\/(\.pnpm\/)?(ioredis|bullmq|@anthropic-ai)/,
  /packages\/(storage-redis|workspace\/src\/index)/,
  // @baton/session's light entry (the MCP config schema) is allowed; nothing else of it.
  /packages\/session\/(?!src\/(mcp-config|mcp\/config|errors)\.ts)/,
  /packages\/projects\/src\/(project-repository|control|repository\/|chain\/)/,
];

const IMPORT = /(?:^|\n)\s*(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"]([^'"]+)['"]/g;

/** Files of the package reachable from `start` and the bare specifiers they import. */
function importGraph(start: string): { files: Set<string>; bare: Map<string, string[]> } {
  const files = new Set<string>();
  const bare = new Map<string, string[]>();
  const pending = [start];
  while (pending.length > 0) {
    const file = pending.pop() as string;
    if (files.has(file)) continue;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(IMPORT)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) {
        pending.push(path.resolve(path.dirname(file), specifier.replace(/\.js$/, '.ts')));
      } else {
        bare.set(specifier, [...(bare.get(specifier) ?? []), path.relative(packageDir, file)]);
      }
    }
  }
  return { files, bare };
}

describe('@baton/projects/schema stays inside the inner boundary', () => {
  it('imports, even as types, only the vocabulary and light packages', () => {
    const { files, bare } = importGraph(entry);
    const crossings = [...bare]
      .filter(([specifier]) => !ALLOWED_SPECIFIERS.has(specifier))
      .map(([specifier, from]) => `${specifier} (from ${from.join(', ')})`);
    expect(crossings).toEqual([]);
    const outerFiles = [...files].filter((file) => OUTER_MODULES.some((rule) => rule.test(file)));
    expect(outerFiles).toEqual([]);
    // The walk did read the vocabulary (a broken walk would pass anything).
    expect([...files].map((file) => path.relative(packageDir, file))).toEqual(
      expect.arrayContaining(['src/project.ts', 'src/chaining.ts', 'src/event-decoder.ts']),
    );
  });

  it('loads no Redis, BullMQ, workspace, session or SDK module in a real process', async () => {
    // A resolve hook that writes every module Node loads to stderr, one URL a line.
    const hook = `data:text/javascript,${encodeURIComponent(
      `import { writeSync } from 'node:fs';
       export async function resolve(specifier, context, next) {
         const result = await next(specifier, context);
         writeSync(2, 'loaded ' + result.url + '\\n');
         return result;
       }`,
    )}`;
    const register = `data:text/javascript,${encodeURIComponent(
      `import { register } from 'node:module'; register(${JSON.stringify(hook)});`,
    )}`;
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      [
        '--conditions=@baton/source',
        '--import',
        'tsx',
        '--import',
        register,
        '--input-type=module',
        '-e',
        `const schema = await import('@baton/projects/schema');
         process.stdout.write(String(schema.PROJECT_STATUSES.length));`,
      ],
      { cwd: packageDir, timeout: 60_000 },
    );
    expect(stdout).toBe('6');
    const loaded = stderr
      .split('\n')
      .filter((line) => line.startsWith('loaded '))
      .map((line) => line.slice('loaded '.length));
    // The hook saw the entry itself and the vocabulary it loads.
    expect(loaded.some((url) => url.endsWith('/packages/projects/src/schema.ts'))).toBe(true);
    expect(loaded.some((url) => url.endsWith('/packages/projects/src/event-decoder.ts'))).toBe(
      true,
    );
    expect(loaded.filter((url) => OUTER_MODULES.some((rule) => rule.test(url)))).toEqual([]);
  }, 90_000);
});
