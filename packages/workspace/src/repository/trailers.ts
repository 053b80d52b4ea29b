/** Trailer naming the project a Baton commit belongs to; how Baton recognises its own branch. */
export const BATON_PROJECT_TRAILER = 'Baton-Project';

/**
 * Trailer naming the fencing token of the project lease a checkpoint was committed under (a
 * worker's session; `baton run` holds no lease and writes none). Git cannot check a token, so a
 * push rejected because commits landed meanwhile reads it: commits of an older token are a
 * replaced session's late push (`stale-tip.ts`).
 */
export const BATON_FENCE_TRAILER = 'Baton-Fence';

/** Trailer on a checkpoint committed without hooks because a hook refused it. */
export const BATON_HOOKS_TRAILER = 'Baton-Hooks';

/** The value of the last `key: value` trailer in a commit message, or `null`. */
export function readTrailer(message: string, key: string): string | null {
  const escaped = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const matches = [...message.matchAll(new RegExp(`^${escaped}:[ \\t]*(.*)$`, 'gim'))];
  const last = matches[matches.length - 1];
  return last?.[1]?.trim() ?? null;
}

/**
 * The `Baton-Fence` of a commit message as Baton writes it (decimal digits), or `null`: a missing
 * trailer (`baton run`'s checkpoints) or any other spelling proves nothing (`Number('')` is 0).
 */
export function readFence(message: string): number | null {
  const text = readTrailer(message, BATON_FENCE_TRAILER);
  if (text === null || !/^\d{1,15}$/u.test(text)) return null;
  return Number(text);
}

/** A commit message: subject, optional body, then one `Key: value` line per trailer. */
export function formatCommitMessage(
  subject: string,
  trailers: ReadonlyArray<readonly [string, string]>,
  body?: string,
): string {
  const clean = (text: string) => text.replace(/[\r\n]+/g, ' ').trim();
  const lines = trailers.map(([key, value]) => `${key}: ${clean(value)}`);
  return `${clean(subject)}\n\n${body === undefined || body.trim() === '' ? '' : `${body.trim()}\n\n`}${lines.join('\n')}\n`;
}
