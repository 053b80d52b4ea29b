import type { Versioned } from './records.js';

/**
 * The last version this store saw of recently used paths, so an edit can send a small reverse
 * delta and check its expected version without reading the file first. Bounded by entries and by
 * characters; least recently stored goes first (a Map keeps insertion order).
 */
export class EditCache {
  readonly #maxEntries: number;
  readonly #maxChars: number;
  #chars = 0;
  readonly #entries = new Map<string, Versioned>();

  constructor(maxEntries: number, maxChars: number) {
    this.#maxEntries = maxEntries;
    this.#maxChars = maxChars;
  }

  get(path: string): Versioned | undefined {
    return this.#entries.get(path);
  }

  remember(path: string, versioned: Versioned): void {
    this.uncache(path);
    const size = versioned.content.length;
    if (this.#maxEntries === 0 || size > this.#maxChars / 4) {
      return;
    }
    this.#entries.set(path, versioned);
    this.#chars += size;
    // Map iteration order is insertion order: the first key is the least recently stored.
    while (this.#entries.size > this.#maxEntries || this.#chars > this.#maxChars) {
      const oldest = this.#entries.keys().next();
      if (oldest.done === true) break;
      this.uncache(oldest.value);
    }
  }

  uncache(path: string): void {
    const cached = this.#entries.get(path);
    if (cached !== undefined) {
      this.#chars -= cached.content.length;
      this.#entries.delete(path);
    }
  }

  /** Drops the cached versions of `path` and everything below it (deleted or moved). */
  forgetBelow(path: string): void {
    const below = `${path}/`;
    for (const cached of this.#entries.keys()) {
      if (cached === path || cached.startsWith(below)) {
        this.uncache(cached);
      }
    }
  }
}
