import { appendFile, mkdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { SECRET_PATTERNS } from '@baton/core';

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

/** True if `file` (relative to `root`) must stay out of commits. */
export async function looksLikeSecretFile(root: string, file: string): Promise<boolean> {
  if (SECRET_FILE_PATTERNS.some((pattern) => pattern.test(path.basename(file)))) return true;
  const absolute = path.join(root, file);
  const info = await stat(absolute).catch(() => null);
  if (info === null || !info.isFile() || info.size > 1_048_576) return false;
  const content = await readFile(absolute, 'utf8').catch(() => '');
  return SECRET_CONTENT_PATTERNS.some(({ pattern }) => {
    pattern.lastIndex = 0;
    const found = pattern.test(content);
    pattern.lastIndex = 0;
    return found;
  });
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
