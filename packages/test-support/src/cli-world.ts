import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach } from 'vitest';

/** Anything a test opens and must close: a model simulator, a server, a proxy. */
export interface Closable {
  close(): unknown;
}

/**
 * What each test of a `cliWorld()` suite gets. The fields are set by the suite's `beforeEach`:
 * read them inside the test.
 */
export interface CliWorld {
  /** The test's own directory (its real path: macOS and some CIs link `/tmp`), removed after it. */
  readonly dir: string;
  /** `<dir>/home`: what the test passes as `BATON_HOME`. */
  readonly home: string;
  /** Closes `resource` after the test, before its directory goes; the last one opened first. */
  closeAfter<T extends Closable>(resource: T): T;
}

/**
 * The preamble of a test that runs `baton` processes: registers a `beforeEach` that makes a fresh
 * temporary directory for every test and an `afterEach` that closes what the test opened through
 * `closeAfter` and removes the directory.
 */
export function cliWorld(tempPrefix = 'baton-cli-'): CliWorld {
  let dir: string | undefined;
  let opened: Closable[] = [];
  beforeEach(async () => {
    dir = await realpath(await mkdtemp(path.join(tmpdir(), tempPrefix)));
  });
  afterEach(async () => {
    const closing = opened.reverse();
    opened = [];
    try {
      for (const resource of closing) await resource.close();
    } finally {
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
      dir = undefined;
    }
  });
  const current = (): string => {
    if (dir === undefined) throw new Error('cliWorld(): read dir and home inside a test');
    return dir;
  };
  return {
    get dir() {
      return current();
    },
    get home() {
      return path.join(current(), 'home');
    },
    closeAfter(resource) {
      opened.push(resource);
      return resource;
    },
  };
}
