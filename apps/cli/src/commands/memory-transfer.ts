import { lstat, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import { isMemoryToolError, parseMemoryPath, type MemoryStore } from '@baton/core';
import { CliError } from '../errors.js';
import { parseProjectId } from '../internal/argument-parsers.js';
import { memoryGroup } from '../internal/memory-group.js';
import { withProjectMemory } from '../internal/project-memory.js';

interface TransferOptions {
  json?: boolean;
  local?: boolean;
  force?: boolean;
}

/** What export and import report (`--json`). */
interface TransferSummary {
  project: string;
  directory: string;
  files: number;
  bytes: number;
}

/** Deep enough for any tree the path policy allows. */
const ALL_LEVELS = 1_000;

async function exportMemory(store: MemoryStore, directory: string): Promise<[number, number]> {
  const entries = await store.list('', { depth: ALL_LEVELS });
  let files = 0;
  let bytes = 0;
  for (const entry of entries) {
    const target = path.join(directory, ...entry.path.split('/'));
    if (entry.kind === 'directory') {
      await mkdir(target, { recursive: true });
      continue;
    }
    const content = await store.read(entry.path);
    if (content === null) continue; // deleted since the listing
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
    files += 1;
    bytes += Buffer.byteLength(content);
  }
  return [files, bytes];
}

/** Every regular file below `directory` as [relative store path, absolute path]; refuses links. */
async function collectFiles(directory: string, relative = ''): Promise<Array<[string, string]>> {
  const found: Array<[string, string]> = [];
  const names = (await readdir(path.join(directory, relative))).sort();
  for (const name of names) {
    const childRelative = relative === '' ? name : `${relative}/${name}`;
    const absolute = path.join(directory, childRelative);
    const info = await lstat(absolute);
    if (info.isDirectory()) found.push(...(await collectFiles(directory, childRelative)));
    else if (info.isFile()) found.push([childRelative, absolute]);
    else
      throw new CliError(
        'usage',
        `${JSON.stringify(absolute)} is not a regular file or directory (links are not imported).`,
      );
  }
  return found;
}

async function importMemory(store: MemoryStore, directory: string): Promise<[number, number]> {
  const files = await collectFiles(directory);
  // Validate every name first, so a bad one leaves the memory untouched.
  const planned = files.map(([relative, absolute]) => {
    try {
      return { storePath: parseMemoryPath(`/memories/${relative}`), absolute };
    } catch (error) {
      if (isMemoryToolError(error))
        throw new CliError('usage', `cannot import ${JSON.stringify(absolute)}: ${error.message}`);
      throw error;
    }
  });
  let bytes = 0;
  for (const file of planned) {
    const content = await readFile(file.absolute, 'utf8');
    await store.write(file.storePath, content, {
      mode: 'overwrite',
      command: 'import',
      session: 'baton-cli',
    });
    bytes += Buffer.byteLength(content);
  }
  return [planned.length, bytes];
}

async function directoryState(directory: string): Promise<'missing' | 'empty' | 'full' | 'file'> {
  const info = await lstat(directory).catch(() => null);
  if (info === null) return 'missing';
  if (!info.isDirectory()) return 'file';
  return (await readdir(directory)).length === 0 ? 'empty' : 'full';
}

function report(summary: TransferSummary, verb: string, json: boolean): void {
  process.stdout.write(
    json
      ? `${JSON.stringify(summary)}\n`
      : `${verb} ${summary.files} file${summary.files === 1 ? '' : 's'} (${summary.bytes} bytes) ${verb === 'Exported' ? 'to' : 'from'} ${summary.directory}.\n`,
  );
}

/** `baton memory export ID DIR` and `baton memory import ID DIR`. */
export function registerMemoryTransferCommands(program: Command): void {
  const group = memoryGroup(program);
  group
    .command('export')
    .description("Copy a project's memory into a folder (one file per memory file).")
    .argument('<id>', 'project id', parseProjectId)
    .argument('<dir>', 'folder to write; must be missing or empty unless --force')
    .option('--force', 'write into a non-empty folder, replacing files with the same names')
    .option('--json', 'print { project, directory, files, bytes }')
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .action(async (id: string, dir: string, options: TransferOptions) => {
      const directory = path.resolve(dir);
      const state = await directoryState(directory);
      if (state === 'file') throw new CliError('usage', `${directory} is not a directory.`);
      if (state === 'full' && options.force !== true) {
        throw new CliError(
          'usage',
          `${directory} is not empty; choose an empty folder or add --force.`,
        );
      }
      await withProjectMemory({ id, local: options.local }, async ({ store }) => {
        await mkdir(directory, { recursive: true });
        const [files, bytes] = await exportMemory(store, directory);
        report({ project: id, directory, files, bytes }, 'Exported', options.json === true);
      });
    });
  group
    .command('import')
    .description(
      "Write every file of a folder into a project's memory (replacing files with the same paths; others are kept).",
    )
    .argument('<id>', 'project id', parseProjectId)
    .argument('<dir>', 'folder to read (regular files only; links are refused)')
    .option('--json', 'print { project, directory, files, bytes }')
    .option('--local', 'a `baton run` project under BATON_HOME instead of one on Redis')
    .action(async (id: string, dir: string, options: TransferOptions) => {
      const directory = path.resolve(dir);
      const state = await directoryState(directory);
      if (state === 'missing') throw new CliError('usage', `no folder ${directory}.`);
      if (state === 'file') throw new CliError('usage', `${directory} is not a directory.`);
      await withProjectMemory({ id, local: options.local }, async ({ store }) => {
        const [files, bytes] = await importMemory(store, directory);
        report({ project: id, directory, files, bytes }, 'Imported', options.json === true);
      });
    });
}
