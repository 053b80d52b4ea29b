/** Paths whose last access-time recording a store remembers (oldest dropped first). */
const ACCESS_RECORD_ENTRIES = 10_000;

interface AccessRecord {
  /** `performance.now()` just before the command that recorded the access was sent. */
  at: number;
  /** The file version the recording saw. */
  version: string;
}

/**
 * "relatime" for the expiry index: remembers, per path, when this store last had Redis record
 * the path's access time, so reads within `granularityMs` of that can skip the recording.
 *
 * A record also keeps the version it saw. A file's access time moves with it on rename and only
 * ever grows, and versions are unique in a namespace, so "same version as recorded" proves the
 * file's access time is still at least the recorded one. A different version (written, or moved
 * here by a rename that kept an older access time, by another store) does not prove that.
 */
export class AccessRecords {
  /** path -> last recording (insertion order: the first key is the oldest recording). */
  readonly #records = new Map<string, AccessRecord>();
  readonly #granularityMs: number;
  readonly #maxEntries: number;

  /** `granularityMs` 0 turns the records off: every read records its access. */
  constructor(granularityMs: number, maxEntries: number = ACCESS_RECORD_ENTRIES) {
    this.#granularityMs = granularityMs;
    this.#maxEntries = maxEntries;
  }

  /** Notes that Redis recorded the access of `path` at `version`, by a command sent at `at`. */
  record(path: string, version: string, at: number): void {
    if (this.#granularityMs === 0) {
      return;
    }
    this.#records.delete(path);
    this.#records.set(path, { at, version });
    for (const oldest of this.#records.keys()) {
      if (this.#records.size <= this.#maxEntries) {
        break;
      }
      this.#records.delete(oldest);
    }
  }

  /**
   * The version whose access this store recorded for `path` less than the granularity ago, or
   * `undefined` when the next read must record it.
   */
  recentVersion(path: string): string | undefined {
    const record = this.#records.get(path);
    if (record === undefined) {
      return undefined;
    }
    if (performance.now() - record.at >= this.#granularityMs) {
      this.#records.delete(path);
      return undefined;
    }
    return record.version;
  }

  /** Drops the record of `path` only. */
  drop(path: string): void {
    this.#records.delete(path);
  }

  /** Drops the records of `path` and everything below it (it was deleted or moved). */
  forget(path: string): void {
    this.#records.delete(path);
    const below = `${path}/`;
    for (const recorded of this.#records.keys()) {
      if (recorded.startsWith(below)) {
        this.#records.delete(recorded);
      }
    }
  }

  /** Drops every record. */
  clear(): void {
    this.#records.clear();
  }

  /** Number of paths remembered (for tests). */
  get size(): number {
    return this.#records.size;
  }
}
