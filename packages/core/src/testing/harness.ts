import { expect } from 'vitest';
import { StoreError, type MemoryStore, type StoreErrorCode, type StoreLimits } from '../store.js';

/** What `setup` receives: the conformance suite asks for limits when it tests them. */
export interface ConformanceSetupOptions {
  /** Limits the store under test must enforce. `undefined` = none. */
  limits?: StoreLimits | undefined;
}

/** A fresh, empty store for one test, and how to dispose of it. */
export interface ConformanceFixture {
  /** An empty store, not shared with any other test. */
  store: MemoryStore;
  /** Removes everything the store left behind. Runs after every test, possibly after `store.close()`. */
  cleanup: () => Promise<void>;
}

/** One behavioural rule of the contract, checked against a fresh store. */
export interface ConformanceCase {
  /** The rule, as a sentence; also the name `options.skip` matches. */
  name: string;
  /** Limits the store must be created with. */
  limits?: StoreLimits;
  /** Checks the rule; throws (via `expect`) when the store breaks it. */
  run: (store: MemoryStore) => Promise<void>;
}

/** A named group of cases, registered as one `describe` block. */
export interface ConformanceGroup {
  name: string;
  cases: ConformanceCase[];
}

/** Awaits `promise`, expects it to reject with a `StoreError` of `code`, and returns the error. */
export async function expectStoreError(
  promise: Promise<unknown>,
  code: StoreErrorCode,
): Promise<StoreError> {
  let outcome: { settled: 'fulfilled'; value: unknown } | { settled: 'rejected'; error: unknown };
  try {
    outcome = { settled: 'fulfilled', value: await promise };
  } catch (error) {
    outcome = { settled: 'rejected', error };
  }
  if (outcome.settled === 'fulfilled') {
    throw new Error(`Expected a StoreError '${code}', but the call succeeded.`);
  }
  const { error } = outcome;
  expect(error, 'a store must only throw StoreError').toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe(code);
  expect(typeof (error as StoreError).message).toBe('string');
  return error as StoreError;
}

/** Writes each `path -> content` pair in create mode, in order. */
export async function seed(store: MemoryStore, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    await store.write(path, content, { mode: 'create' });
  }
}

/** Paths returned by `list`, in the order returned. */
export async function listPaths(
  store: MemoryStore,
  path: string,
  depth: number,
  skipHidden = false,
): Promise<string[]> {
  const entries = await store.list(path, { depth, skipHidden });
  return entries.map((entry) => entry.path);
}

/** Every file below the root with its content: a snapshot to prove that nothing changed. */
export async function snapshot(store: MemoryStore): Promise<Record<string, string | null>> {
  const entries = await store.list('', { depth: Number.MAX_SAFE_INTEGER });
  const result: Record<string, string | null> = {};
  for (const entry of entries) {
    result[entry.path] = entry.kind === 'file' ? await store.read(entry.path) : null;
  }
  return result;
}

/** Code-unit order, the order the contract requires of `list`. */
export function byCodeUnits(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
