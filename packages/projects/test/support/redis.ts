import { randomHex } from '@baton/test-support';

/** A fresh `{hash tag}` prefix so every test has its own queues and project keys. */
export function randomPrefix(): string {
  return `{bt-${randomHex(5)}}`;
}

export function randomProjectId(label = 'p'): string {
  return `${label}-${randomHex(5)}`;
}
