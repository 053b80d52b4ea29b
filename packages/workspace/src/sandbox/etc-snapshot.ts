import { createHash } from 'node:crypto';
import {
  type Dirent,
  type Stats,
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The parts of `/etc` programs need to run (loader, users, certificates, alternatives, locale,
 * git and interpreter defaults). Everything else stays out: `shadow`, ssh keys, package-manager
 * credentials (`npmrc`, `pip.conf`), service configuration with passwords.
 */
const ETC_ENTRIES: readonly string[] = [
  'alternatives',
  'bash.bashrc',
  'ca-certificates',
  'ca-certificates.conf',
  'debian_version',
  'gai.conf',
  'gitconfig',
  'group',
  'host.conf',
  'hosts',
  'inputrc',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'locale.alias',
  'localtime',
  'magic',
  'magic.mime',
  'mime.types',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'perl',
  'profile',
  'protocols',
  'services',
  'shells',
  'ssl',
  'terminfo',
  'timezone',
];

/** `python3`, `python3.11`: interpreter defaults, whatever the version. */
const ETC_PATTERN = /^python3(\.\d+)?$/;

/** Options of `etcSnapshot`. */
export interface EtcSnapshotOptions {
  /** The directory copied from. Default `/etc`. */
  source?: string;
  /** Where snapshots are made (each in a private directory of its own). Default `os.tmpdir()`. */
  parent?: string;
}

interface Entry {
  /** Path relative to the source. */
  relative: string;
  /** `undefined` for a symlink: its directory's mtime changes when it is added or retargeted. */
  stat: Stats | undefined;
}

/**
 * The allowed entries below `source`, walked without following symlinks. Entries other users
 * cannot read are left out: a worker running as root must not hand the sandbox (root inside its
 * user namespace) what only root may read, such as `/etc/ssl/private`.
 */
function allowedEntries(source: string): Entry[] {
  let names: string[];
  try {
    names = readdirSync(source);
  } catch {
    // A host without /etc still gets a working sandbox for static tools.
    return [];
  }
  const entries: Entry[] = [];
  const visit = (relative: string, symlink: boolean) => {
    if (symlink) {
      entries.push({ relative, stat: undefined });
      return;
    }
    let stat: Stats;
    try {
      stat = lstatSync(path.join(source, relative));
    } catch {
      return;
    }
    if (stat.isSymbolicLink()) {
      entries.push({ relative, stat: undefined });
    } else if (stat.isFile()) {
      if ((stat.mode & 0o004) !== 0) entries.push({ relative, stat });
    } else if (stat.isDirectory() && (stat.mode & 0o005) === 0o005) {
      entries.push({ relative, stat });
      let children: Dirent[];
      try {
        children = readdirSync(path.join(source, relative), { withFileTypes: true });
      } catch {
        return;
      }
      children.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      for (const child of children) {
        visit(path.join(relative, child.name), child.isSymbolicLink());
      }
    }
  };
  for (const name of names.sort()) {
    if (ETC_ENTRIES.includes(name) || ETC_PATTERN.test(name)) visit(name, false);
  }
  return entries;
}

/** Changes whenever an entry is added, removed, retargeted or written. */
function signatureOf(entries: readonly Entry[]): string {
  const hash = createHash('sha256');
  for (const { relative, stat } of entries) {
    hash.update(
      stat === undefined
        ? `${relative}\0link\n`
        : `${relative}\0${stat.mode}\0${stat.ino}\0${stat.size}\0${stat.mtimeMs}\0${stat.ctimeMs}\n`,
    );
  }
  return hash.digest('hex');
}

function copyEntries(source: string, target: string, entries: readonly Entry[]): void {
  for (const { relative, stat } of entries) {
    const from = path.join(source, relative);
    const to = path.join(target, relative);
    if (stat === undefined) symlinkSync(readlinkSync(from), to);
    else if (stat.isDirectory()) mkdirSync(to, { mode: stat.mode & 0o755 });
    else {
      copyFileSync(from, to);
      chmodSync(to, stat.mode & 0o755);
    }
  }
}

interface Snapshot {
  directory: string;
  signature: string;
}

const snapshots = new Map<string, Snapshot>();
/** Every directory this process made: snapshots of a changed `/etc` stay until exit. */
const made: string[] = [];
let cleanupInstalled = false;

/**
 * A copy of the allowed parts of `/etc` (`ETC_ENTRIES`), made once per process and remade when
 * any of them changes, so that the sandbox binds one directory as `/etc` instead of one mount per
 * entry (each bind costs bubblewrap a mount and a read of the mount table, on every command).
 * Called once per session: the walk that checks for changes reads the directories and `lstat`s
 * the files (not the symlinks, whose directory's mtime changes with them), a few milliseconds.
 *
 * A snapshot replaced after a change is kept until the process exits: commands of other sessions
 * may still have it mounted.
 */
export function etcSnapshot(options: EtcSnapshotOptions = {}): string {
  const source = options.source ?? '/etc';
  const parent = options.parent ?? os.tmpdir();
  const key = `${source}\0${parent}`;
  const entries = allowedEntries(source);
  const signature = signatureOf(entries);
  const current = snapshots.get(key);
  if (current !== undefined && current.signature === signature) return current.directory;
  // mkdtemp's 0700 keeps other users of the machine out; the copy inside reads like /etc.
  const holder = mkdtempSync(path.join(parent, 'baton-sandbox-etc-'));
  made.push(holder);
  if (!cleanupInstalled) {
    cleanupInstalled = true;
    process.once('exit', () => {
      for (const directory of made) rmSync(directory, { recursive: true, force: true });
    });
  }
  const directory = path.join(holder, 'etc');
  mkdirSync(directory, { mode: 0o755 });
  copyEntries(source, directory, entries);
  snapshots.set(key, { directory, signature });
  return directory;
}
