import { deletePrefix as deleteKeysUnder, randomHex } from '@baton/test-support';

/** A fresh `{hash tag}` prefix so every test has its own queues and project keys. */
export function randomPrefix(): string {
  return `{bt-${randomHex(5)}}`;
}

export function randomProjectId(label = 'p'): string {
  return `${label}-${randomHex(5)}`;
}

// bench/worker.bench.ts still imports these two from here, `deletePrefix` in its old
// `(url, prefix)` order. Tests import `deletePrefix(prefix)` and `waitFor` from
// `@baton/test-support`; once the bench does too, both lines below can go.
export { waitFor } from '@baton/test-support';
export function deletePrefix(url: string, prefix: string): Promise<void> {
  return deleteKeysUnder(prefix, url);
}
