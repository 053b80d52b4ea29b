import { randomBytes } from 'node:crypto';
import { constants, existsSync, type Stats } from 'node:fs';
import { lstat, mkdir, open, opendir, rename, rm, type FileHandle } from 'node:fs/promises';
import path from 'node:path';

/**
 * The text editor's access to the workspace. Everything in the workspace is hostile (the agent
 * writes it, and commands in the sandbox can change it while the editor works), so every path is
 * walked from the workspace root one component at a time without following a symbolic link in
 * any component: a directory is opened with `O_DIRECTORY | O_NOFOLLOW` and the next component is
 * looked up *through that open directory* (`/proc/self/fd/<fd>/<name>`, Linux's `openat`), so
 * swapping a directory for a link after it was checked changes nothing. Files are opened with
 * `O_NOFOLLOW | O_NONBLOCK` and checked with `fstat` (a FIFO cannot hang a read, a device is never
 * read), and written through a temporary file in the same directory renamed into place (a link
 * planted at the name is replaced, never written through). Where `/proc/self/fd` does not exist
 * (not Linux) the same walk runs on plain paths, checked with `lstat` at each step.
 */

/** Why a path was refused or an operation failed; `message` is written for the model. */
export class WorkspacePathError extends Error {
  readonly code: WorkspacePathErrorCode;
  constructor(code: WorkspacePathErrorCode, message: string) {
    super(message);
    this.name = 'WorkspacePathError';
    this.code = code;
  }
}

export type WorkspacePathErrorCode =
  | 'invalid'
  | 'outside'
  | 'symlink'
  | 'not_found'
  | 'not_regular'
  | 'is_directory'
  | 'not_directory'
  | 'too_large';

/** A path the model gave, checked lexically: inside the workspace, split into components. */
export interface WorkspacePath {
  /** Path relative to the workspace root, `.` for the root itself. */
  relative: string;
  /** `relative` split at `/` (empty for the root). */
  components: string[];
}

/** What an entry is, from `lstat` (a link is a link, whatever it points at). */
type EntryKind = 'file' | 'directory' | 'symlink' | 'other';

function kindOf(info: Stats): EntryKind {
  if (info.isSymbolicLink()) return 'symlink';
  if (info.isFile()) return 'file';
  if (info.isDirectory()) return 'directory';
  return 'other';
}

function otherKindName(info: Stats): string {
  if (info.isFIFO()) return 'a named pipe (FIFO)';
  if (info.isSocket()) return 'a socket';
  if (info.isCharacterDevice() || info.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : null;

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_DIRECTORY, O_NOFOLLOW, O_NONBLOCK } = constants;

/**
 * Check `input` (relative to the workspace root, or absolute inside it) lexically: `../` climbs
 * and absolute paths elsewhere are refused. Links are checked when the path is used.
 */
export function parseWorkspacePath(root: string, input: string): WorkspacePath {
  if (input.trim() === '' || input.includes('\0')) {
    throw new WorkspacePathError(
      'invalid',
      'The path is empty or not valid. Use a path relative to the workspace root.',
    );
  }
  const lexical = path.isAbsolute(input) ? path.resolve(input) : path.resolve(root, input);
  const relative = path.relative(root, lexical);
  if (relative.startsWith('..') || path.isAbsolute(relative)) {
    throw new WorkspacePathError(
      'outside',
      `The path ${input} is outside the workspace. Use a path relative to the workspace root (for example src/app.js).`,
    );
  }
  return {
    relative: relative === '' ? '.' : relative,
    components: relative === '' ? [] : relative.split(path.sep),
  };
}

/** An open directory of the workspace, reached without following links. */
interface OpenDirectory {
  handle: FileHandle;
  /** How to name a child of this directory so the lookup goes through the open descriptor. */
  child(name: string): string;
  /** Relative path shown in messages. */
  shown: string;
}

function openedAt(handle: FileHandle, fallbackPath: string, shown: string): OpenDirectory {
  return {
    handle,
    child: (name) =>
      PROC_FD === null ? path.join(fallbackPath, name) : `${PROC_FD}/${handle.fd}/${name}`,
    shown,
  };
}

function linkRefusal(shown: string, at: string): WorkspacePathError {
  return new WorkspacePathError(
    'symlink',
    at === shown
      ? `The path ${shown} is a symbolic link; the text editor does not follow symbolic links. Use the path of the file itself.`
      : `The path ${shown} goes through the symbolic link ${at}; the text editor does not follow symbolic links. Use the path of the file itself.`,
  );
}

/** Options of `createWorkspaceFiles`. */
export interface WorkspaceFilesOptions {
  /** Realpath of the workspace root (made by Baton, trusted). */
  root: string;
}

/** One entry of a directory listing. */
interface ListedEntry {
  /** Path relative to the listed directory. */
  relative: string;
  kind: EntryKind;
  /** Size from `lstat`: a link's own size, never its target's. */
  size: number;
}

/** What `list` returns: the entries, and whether a budget cut it short. */
interface Listing {
  entries: ListedEntry[];
  truncated: boolean;
}

/** The confined file operations of the text editor. */
export interface WorkspaceFiles {
  /** The kind and size of what is at `target` (`null`: nothing there). Never follows a link. */
  inspect(target: WorkspacePath): Promise<{ kind: EntryKind; size: number } | null>;
  /**
   * The content of the regular file at `target`; refused when it is larger than `maxBytes`
   * (`too_large`, with its size), or not a regular file.
   */
  readText(target: WorkspacePath, maxBytes: number): Promise<string>;
  /** Writes `content` to `target` through a temporary file renamed into place; creates parents. */
  writeText(target: WorkspacePath, content: string): Promise<void>;
  /**
   * Entries of the directory `target` and of its subdirectories to `depth` levels, hidden entries
   * and node_modules left out, sorted; at most `maxEntries` (reading stops there).
   */
  list(target: WorkspacePath, depth: number, maxEntries: number): Promise<Listing>;
}

export function createWorkspaceFiles(options: WorkspaceFilesOptions): WorkspaceFiles {
  const root = options.root;

  async function openRoot(): Promise<OpenDirectory> {
    const handle = await open(root, O_RDONLY | O_DIRECTORY);
    return openedAt(handle, root, '.');
  }

  /** Opens the directory `name` inside `parent` without following a link. */
  async function openChildDirectory(
    parent: OpenDirectory,
    name: string,
    shown: string,
    fullShown: string,
  ): Promise<OpenDirectory> {
    const location = parent.child(name);
    const info = await lstat(location);
    if (info.isSymbolicLink()) throw linkRefusal(fullShown, shown);
    if (!info.isDirectory()) {
      throw new WorkspacePathError('not_directory', `The path ${shown} is not a directory.`);
    }
    let handle: FileHandle;
    try {
      handle = await open(location, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (caught) {
      // Swapped for a link between the lstat and the open.
      if (isCode(caught, 'ELOOP') || isCode(caught, 'ENOTDIR')) throw linkRefusal(fullShown, shown);
      throw caught;
    }
    return openedAt(handle, PROC_FD === null ? location : '', shown);
  }

  /**
   * Walks to the parent directory of `target` (or to `target` itself with `includeLast`),
   * creating missing directories when `create` is set. The caller closes the result.
   */
  async function walk(
    target: WorkspacePath,
    walkOptions: { includeLast: boolean; create: boolean },
  ): Promise<OpenDirectory> {
    const components = walkOptions.includeLast ? target.components : target.components.slice(0, -1);
    let current = await openRoot();
    try {
      for (let index = 0; index < components.length; index += 1) {
        const name = components[index] as string;
        const shown = components.slice(0, index + 1).join('/');
        let next: OpenDirectory;
        try {
          next = await openChildDirectory(current, name, shown, target.relative);
        } catch (caught) {
          if (!isCode(caught, 'ENOENT')) throw caught;
          if (!walkOptions.create) {
            throw new WorkspacePathError(
              'not_found',
              `The path ${target.relative} does not exist. Please provide a valid path.`,
            );
          }
          // mkdir never follows a link at the name: a link there makes it fail with EEXIST.
          await mkdir(current.child(name)).catch((error: unknown) => {
            if (!isCode(error, 'EEXIST')) throw error;
          });
          next = await openChildDirectory(current, name, shown, target.relative);
        }
        await current.handle.close();
        current = next;
      }
      return current;
    } catch (caught) {
      await current.handle.close().catch(() => undefined);
      throw caught;
    }
  }

  async function lstatAt(directory: OpenDirectory, name: string): Promise<Stats | null> {
    return lstat(directory.child(name)).catch((caught: unknown) => {
      if (isCode(caught, 'ENOENT')) return null;
      throw caught;
    });
  }

  function lastName(target: WorkspacePath): string {
    const name = target.components[target.components.length - 1];
    if (name === undefined) {
      throw new WorkspacePathError(
        'is_directory',
        'The path . is the workspace root, a directory.',
      );
    }
    return name;
  }

  async function withParent<T>(
    target: WorkspacePath,
    create: boolean,
    use: (parent: OpenDirectory, name: string) => Promise<T>,
  ): Promise<T> {
    const name = lastName(target);
    const parent = await walk(target, { includeLast: false, create });
    try {
      return await use(parent, name);
    } finally {
      await parent.handle.close().catch(() => undefined);
    }
  }

  function refuseKind(target: WorkspacePath, info: Stats): never {
    if (info.isSymbolicLink()) throw linkRefusal(target.relative, target.relative);
    if (info.isDirectory()) {
      throw new WorkspacePathError('is_directory', `Error: ${target.relative} is a directory.`);
    }
    throw new WorkspacePathError(
      'not_regular',
      `The path ${target.relative} is ${otherKindName(info)}; the text editor reads and writes only regular files and directories.`,
    );
  }

  return {
    async inspect(target) {
      if (target.components.length === 0) {
        const info = await lstat(root);
        return { kind: 'directory', size: info.size };
      }
      try {
        return await withParent(target, false, async (parent, name) => {
          const info = await lstatAt(parent, name);
          return info === null ? null : { kind: kindOf(info), size: info.size };
        });
      } catch (caught) {
        if (caught instanceof WorkspacePathError && caught.code === 'not_found') return null;
        throw caught;
      }
    },

    async readText(target, maxBytes) {
      return withParent(target, false, async (parent, name) => {
        const info = await lstatAt(parent, name);
        if (info === null) {
          throw new WorkspacePathError(
            'not_found',
            `The path ${target.relative} does not exist. Please provide a valid path.`,
          );
        }
        if (!info.isFile()) refuseKind(target, info);
        let handle: FileHandle;
        try {
          handle = await open(parent.child(name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
        } catch (caught) {
          if (isCode(caught, 'ELOOP')) throw linkRefusal(target.relative, target.relative);
          throw caught;
        }
        try {
          // What was opened is what counts: the name may have been swapped since the lstat.
          const opened = await handle.stat();
          if (!opened.isFile()) refuseKind(target, opened);
          if (opened.size > maxBytes) throw tooLarge(target, opened.size, maxBytes);
          const buffer = Buffer.alloc(Math.min(maxBytes + 1, opened.size + 1));
          let length = 0;
          while (length < buffer.length) {
            const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
            if (bytesRead === 0) break;
            length += bytesRead;
          }
          if (length > maxBytes) throw tooLarge(target, length, maxBytes);
          return buffer.subarray(0, length).toString('utf8');
        } finally {
          await handle.close();
        }
      });
    },

    async writeText(target, content) {
      await withParent(target, true, async (parent, name) => {
        const existing = await lstatAt(parent, name);
        if (existing !== null && !existing.isFile()) refuseKind(target, existing);
        const temporary = `.baton-edit-${randomBytes(6).toString('hex')}.tmp`;
        const handle = await open(
          parent.child(temporary),
          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW,
          existing === null ? 0o644 : existing.mode & 0o7777,
        );
        try {
          try {
            await handle.writeFile(content, 'utf8');
          } finally {
            await handle.close();
          }
          // rename replaces whatever is at the name (a link included) and never follows it.
          await rename(parent.child(temporary), parent.child(name));
        } catch (caught) {
          await rm(parent.child(temporary), { force: true }).catch(() => undefined);
          throw caught;
        }
      });
    },

    async list(target, depth, maxEntries) {
      const entries: ListedEntry[] = [];
      let truncated = false;
      const visit = async (
        directory: OpenDirectory,
        prefix: string,
        level: number,
      ): Promise<void> => {
        const names: string[] = [];
        const reader = await opendir(directory.child('.'), { bufferSize: 256 });
        try {
          for await (const entry of reader) {
            if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
            // Reading stops at the budget: a directory of 100,000 files costs a bounded read.
            if (names.length >= maxEntries) {
              truncated = true;
              break;
            }
            names.push(entry.name);
          }
        } finally {
          await reader.close().catch(() => undefined);
        }
        names.sort((left, right) => left.localeCompare(right));
        for (const name of names) {
          if (entries.length >= maxEntries) {
            truncated = true;
            return;
          }
          const info = await lstatAt(directory, name);
          if (info === null) continue;
          const relative = prefix === '' ? name : `${prefix}/${name}`;
          entries.push({ relative, kind: kindOf(info), size: info.size });
          if (info.isDirectory() && level < depth) {
            let child: OpenDirectory;
            try {
              child = await openChildDirectory(directory, name, relative, relative);
            } catch {
              continue;
            }
            try {
              await visit(child, relative, level + 1);
            } finally {
              await child.handle.close().catch(() => undefined);
            }
          }
        }
      };
      const directory = await walk(target, { includeLast: true, create: false });
      try {
        await visit(directory, '', 1);
      } finally {
        await directory.handle.close().catch(() => undefined);
      }
      return { entries, truncated };
    },
  };
}

function tooLarge(target: WorkspacePath, size: number, maxBytes: number): WorkspacePathError {
  return new WorkspacePathError(
    'too_large',
    `The file ${target.relative} is ${formatBytes(size)}, larger than the ${formatBytes(maxBytes)} the text editor reads. Read a part of it with bash (\`head -n 200 ${target.relative}\`, \`sed -n '1000,1200p' ${target.relative}\`).`,
  );
}

/** `1.5 GB`, `12.0 KB`, `300 bytes`. */
function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

function isCode(caught: unknown, code: string): boolean {
  return (caught as NodeJS.ErrnoException | null)?.code === code;
}
