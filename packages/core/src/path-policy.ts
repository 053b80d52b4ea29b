/**
 * The path policy: the one place that turns a virtual path from the model into a `StorePath`.
 *
 * Every path is hostile. We canonicalise first and then check, and we never decode anything: a
 * store receives exactly the canonical segments this module returns, so there is no second
 * interpretation of a path anywhere downstream that could disagree with the check.
 *
 * Accepted: `/memories` and `/memories/<segments>`, with `/` separators. Runs of slashes collapse
 * (`//memories//a/` = `/memories/a`), `.` segments are dropped (`/memories/./a` = `/memories/a`),
 * and names are NFC-normalised, so every equivalent spelling maps to one canonical path.
 *
 * Refused (each with a short message that names the problem): anything not equal to or below
 * `/memories` (`/memoriesX/a`, `/memories_backup/a`, `memories/a`, `/etc/passwd`), `..` segments
 * (even ones that would stay inside the root: one rule is easier to trust than a resolver), any
 * backslash, NUL and every other control or invisible formatting character (C0, DEL, C1, line and
 * paragraph separators, bidirectional overrides), lone surrogates, percent-encoded `.` `/` `\` `%`
 * or control bytes in any letter case (which also catches double encoding: `%252e` contains
 * `%25`), overlong UTF-8 encodings of them (`%c0%ae`), `%u002e`, paths longer than
 * `maxPathLength` characters and names longer than `maxNameLength` UTF-8 bytes.
 */
import { MemoryToolError } from './memory-tool-error.js';

/** The virtual root every memory path lives under. */
export const MEMORY_ROOT = '/memories';

/** Limits the path policy enforces. */
export interface PathPolicyOptions {
  /** Longest accepted input path, in characters. Default 1,024. */
  maxPathLength?: number;
  /** Longest accepted single name (path segment), in UTF-8 bytes. Default 255 (ext4's limit). */
  maxNameLength?: number;
}

const DEFAULT_MAX_PATH_LENGTH = 1_024;
const DEFAULT_MAX_NAME_LENGTH = 255;

/**
 * C0 controls, DEL, C1 controls, zero-width and bidirectional formatting characters, line and
 * paragraph separators, the BOM. They are invisible or reorder text, so a name containing one can
 * look like a different, trusted name in a listing.
 */
const FORBIDDEN_CHARACTERS =
  // eslint-disable-next-line no-control-regex -- refusing control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/;

/**
 * Percent-encodings of bytes that could change a path's meaning if any later layer decoded it:
 * `.` (2e), `/` (2f), `\` (5c), `%` (25, so double encoding such as `%252e` is caught), control
 * bytes (00-1f, 7f), overlong UTF-8 lead bytes (c0, c1; e0 8x/9x; f0 8x) and IIS-style `%uXXXX`.
 */
const ENCODED_SPECIAL =
  /%(?:2e|2f|5c|25|[01][0-9a-f]|7f|c0|c1|e0%[89][0-9a-f]|f0%8[0-9a-f]|u[0-9a-f]{4})/i;

/** Lone UTF-16 surrogates cannot be encoded as UTF-8, so no store could hold such a name. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** A path of ASCII characters only (control characters are refused before this is asked). */
// eslint-disable-next-line no-control-regex -- control characters are part of the ASCII range tested
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Validates and canonicalises a virtual path. Returns its `StorePath`: `''` for the root,
 * otherwise the segments below `/memories` joined by `/` (`'/memories/notes/a.md'` ->
 * `'notes/a.md'`). Throws `MemoryToolError` with code `invalid_path` for anything refused.
 */
export function parseMemoryPath(path: string, options: PathPolicyOptions = {}): string {
  const maxPathLength = options.maxPathLength ?? DEFAULT_MAX_PATH_LENGTH;
  const maxNameLength = options.maxNameLength ?? DEFAULT_MAX_NAME_LENGTH;

  if (typeof path !== 'string') {
    throw refuse('Error: The path must be a string.');
  }
  if (path.length === 0) {
    throw refuse('Error: The path is empty. Paths must be /memories or start with /memories/.');
  }
  if (path.length > maxPathLength) {
    // The path itself is not echoed: it is long, and the model already has it.
    throw refuse(
      `Error: The path is ${path.length} characters long, over the limit of ${maxPathLength} characters.`,
    );
  }
  if (FORBIDDEN_CHARACTERS.test(path) || LONE_SURROGATE.test(path)) {
    throw refuse(
      `Error: The path ${displayPath(path)} contains a control or invisible formatting character, which is not allowed.`,
    );
  }
  if (path.includes('\\')) {
    throw refuse(
      `Error: The path ${displayPath(path)} contains a backslash, which is not allowed. Use / to separate names.`,
    );
  }
  if (ENCODED_SPECIAL.test(path)) {
    throw refuse(
      `Error: The path ${displayPath(path)} contains a percent-encoded '.', '/', '\\', '%' or control character, which is not allowed. Paths are never decoded: write them plainly.`,
    );
  }

  const collapsed = path.replace(/\/{2,}/g, '/');
  if (collapsed !== MEMORY_ROOT && !collapsed.startsWith(`${MEMORY_ROOT}/`)) {
    throw refuse(
      `Error: The path ${displayPath(path)} is outside the memory directory. Paths must be /memories or start with /memories/.`,
    );
  }

  // ASCII names are their own NFC form and one byte per character.
  const ascii = ASCII.test(collapsed);
  const segments: string[] = [];
  for (const segment of collapsed.slice(MEMORY_ROOT.length).split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      throw refuse(
        `Error: The path ${displayPath(path)} contains a '..' segment, which is not allowed. Write the path without '..'.`,
      );
    }
    const name = ascii ? segment : segment.normalize('NFC');
    const bytes = ascii ? name.length : Buffer.byteLength(name, 'utf8');
    if (bytes > maxNameLength) {
      throw refuse(
        `Error: The name ${displayPath(name, 40)} in the path is ${bytes} bytes long, over the limit of ${maxNameLength} bytes.`,
      );
    }
    segments.push(name);
  }
  return segments.join('/');
}

/** The virtual path of a `StorePath`: `''` -> `'/memories'`, `'a/b.md'` -> `'/memories/a/b.md'`. */
export function toVirtualPath(storePath: string): string {
  return storePath === '' ? MEMORY_ROOT : `${MEMORY_ROOT}/${storePath}`;
}

/**
 * A refused path as it may be shown back to the model: control characters escaped so the
 * message stays one clean line, and cut when long.
 */
export function displayPath(path: string, maxLength = 200): string {
  const escaped = path.replace(DISPLAY_ESCAPED, (character) => {
    return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
  });
  return escaped.length > maxLength ? `${escaped.slice(0, maxLength)}...` : escaped;
}

/** Everything `FORBIDDEN_CHARACTERS` and `LONE_SURROGATE` match, for escaping in messages. */
const DISPLAY_ESCAPED = new RegExp(`${FORBIDDEN_CHARACTERS.source}|${LONE_SURROGATE.source}`, 'g');

function refuse(message: string): MemoryToolError {
  return new MemoryToolError(message, { code: 'invalid_path' });
}
