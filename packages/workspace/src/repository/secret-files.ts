import { constants, existsSync } from 'node:fs';
import {
  appendFile,
  lstat,
  mkdir,
  open,
  readFile,
  readlink,
  realpath,
  type FileHandle,
} from 'node:fs/promises';
import path from 'node:path';
import { MAX_REDACTED_TEXT_BYTES, SECRET_PATTERNS } from '@baton/core';

/** File names never committed (matched against the base name). Documented in docs/workspaces.md. */
export const SECRET_FILE_PATTERNS: readonly RegExp[] = [
  /^\.env$/,
  /^\.env\.(?!example$|sample$|template$).+$/,
  /\.(?:pem|key|p12|pfx|jks|keystore|asc|gpg)$/i,
  /^id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?$/,
  /^\.npmrc$/,
  /^\.netrc$/,
  /^\.pgpass$/,
  /^credentials(?:\.json)?$/i,
  /^secrets?\.(?:json|ya?ml|toml)$/i,
];

/** Content rules that keep a file out of a commit: the table's vendor formats only, so code with `password=` still commits. */
const SECRET_CONTENT_PATTERNS = SECRET_PATTERNS.filter((rule) => rule.kind === 'format');

const EXCLUDE_MARKER = '# baton: never commit secrets';
const EXCLUDE_LINES = [
  '.env',
  '.env.*',
  '!.env.example',
  '*.pem',
  '*.key',
  'id_rsa*',
  'id_ed25519*',
  '.npmrc',
  '.netrc',
];

/** The most of one file a scan reads: the prefix the content rules are proven linear on. */
export const MAX_SCANNED_BYTES = MAX_REDACTED_TEXT_BYTES;

const PROC_FD = existsSync('/proc/self/fd') ? '/proc/self/fd' : null;

/** True when `file`'s base name matches `SECRET_FILE_PATTERNS`. */
export function hasSecretFileName(file: string): boolean {
  return SECRET_FILE_PATTERNS.some((pattern) => pattern.test(path.basename(file)));
}

/**
 * True if `file` (relative to `root`) must stay out of commits: its name matches
 * `SECRET_FILE_PATTERNS`, or the first `MAX_SCANNED_BYTES` of a regular file hold a vendor key.
 * Symbolic links and anything but regular files are never opened (a link's target is the host's
 * business, and whether it holds a key must not show in what is committed); a file is opened
 * without following links and without blocking, and only if what was opened is inside `root`.
 */
export async function looksLikeSecretFile(root: string, file: string): Promise<boolean> {
  if (hasSecretFileName(file)) return true;
  const content = await readScannablePrefix(root, file);
  if (content === null) return false;
  return textHoldsSecret(content);
}

/**
 * True when `content` holds a vendor key by the content rules checkpoints use. Give it at most
 * `MAX_SCANNED_BYTES` (the prefix the rules are proven linear on).
 */
export function textHoldsSecret(content: string): boolean {
  return SECRET_CONTENT_PATTERNS.some(({ pattern }) => {
    pattern.lastIndex = 0;
    const found = pattern.test(content);
    pattern.lastIndex = 0;
    return found;
  });
}

/** The first `MAX_SCANNED_BYTES` of a regular file inside `root`; `null` for anything else. */
async function readScannablePrefix(root: string, file: string): Promise<string | null> {
  const absolute = path.join(root, file);
  const info = await lstat(absolute).catch(() => null);
  if (info === null || !info.isFile()) return null;
  let handle: FileHandle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return null;
  }
  try {
    const opened = await handle.stat();
    if (!opened.isFile()) return null;
    if (PROC_FD !== null) {
      // A directory on the way swapped for a link since the lstat: what was opened decides.
      const [real, rootReal] = await Promise.all([
        readlink(`${PROC_FD}/${handle.fd}`),
        realpath(root),
      ]);
      if (!real.startsWith(rootReal.endsWith(path.sep) ? rootReal : rootReal + path.sep)) {
        return null;
      }
    }
    const buffer = Buffer.alloc(Math.min(opened.size, MAX_SCANNED_BYTES));
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    return buffer.subarray(0, length).toString('utf8');
  } catch {
    return null;
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** Adds the secret file patterns to a git directory's `info/exclude` (once). */
export async function ensureSecretExcludes(gitDir: string): Promise<void> {
  const file = path.join(gitDir, 'info', 'exclude');
  const current = await readFile(file, 'utf8').catch(() => '');
  if (current.includes(EXCLUDE_MARKER)) return;
  await mkdir(path.dirname(file), { recursive: true });
  await appendFile(
    file,
    `${current.endsWith('\n') || current === '' ? '' : '\n'}${EXCLUDE_MARKER}\n${EXCLUDE_LINES.join('\n')}\n`,
  );
}
