import { realpath } from 'node:fs/promises';
import path from 'node:path';

/** A path the model gave, resolved inside the workspace. */
export interface ResolvedWorkspacePath {
  /** Absolute host path (never shown to the model). */
  absolute: string;
  /** Path relative to the workspace root, `.` for the root itself. */
  relative: string;
}

/** Result of resolving: the path, or a refusal message for the model. */
export type WorkspacePathResult =
  { ok: true; path: ResolvedWorkspacePath } | { ok: false; message: string };

function isInside(root: string, candidate: string): boolean {
  return (
    candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep)
  );
}

async function deepestExistingRealpath(candidate: string): Promise<string> {
  let current = candidate;
  for (;;) {
    try {
      return path.join(await realpath(current), path.relative(current, candidate));
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return candidate;
      current = parent;
    }
  }
}

/**
 * Resolve `input` (relative to the workspace root, or absolute inside it) and refuse anything
 * that lands outside the workspace: `../` climbs, absolute paths elsewhere, and symlinks (at the
 * path or any parent) whose target is outside. `root` must already be a realpath.
 */
export async function resolveWorkspacePath(
  root: string,
  input: string,
): Promise<WorkspacePathResult> {
  const outside = `The path ${input} is outside the workspace. Use a path relative to the workspace root (for example src/app.js).`;
  if (input.trim() === '' || input.includes('\0')) {
    return {
      ok: false,
      message: 'The path is empty or not valid. Use a path relative to the workspace root.',
    };
  }
  const lexical = path.isAbsolute(input) ? path.resolve(input) : path.resolve(root, input);
  if (!isInside(root, lexical)) return { ok: false, message: outside };
  const real = await deepestExistingRealpath(lexical);
  if (!isInside(root, real)) {
    return {
      ok: false,
      message: `The path ${input} leads outside the workspace through a symbolic link and was refused.`,
    };
  }
  const relative = path.relative(root, real);
  return { ok: true, path: { absolute: real, relative: relative === '' ? '.' : relative } };
}
