import { execFileSync } from 'node:child_process';
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createFileSystemStore, type MemoryStore } from '@baton/core';
import { startModelSim, type ModelSim, type ModelSimOptions } from '@baton/model-sim';
import type { RunSessionOptions, SessionEvent } from '../src/index.js';

/** A temp project: a git workspace, a filesystem memory store and a simulator. */
export interface Harness {
  dir: string;
  workspace: string;
  store: MemoryStore;
  sim: ModelSim;
  client: Anthropic;
  events: SessionEvent[];
  /** Options for runSession with fast retries and test defaults. */
  options(overrides?: Partial<RunSessionOptions>): RunSessionOptions;
  git(...args: string[]): string;
  close(): Promise<void>;
}

export const GOAL = [
  'A tiny todo command line app.',
  '- Add a todo with a title',
  '- List todos',
  '- Mark a todo as done',
].join('\n');

export async function createHarness(
  simOptions: ModelSimOptions = {},
  git = true,
): Promise<Harness> {
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-session-')));
  const workspace = path.join(dir, 'workspace');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(workspace);
  const runGit = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: workspace,
      encoding: 'utf8',
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    });
  if (git) runGit('init', '-q', '-b', 'main');
  const store = await createFileSystemStore({ root: path.join(dir, 'memories') });
  const sim = await startModelSim(simOptions);
  const client = new Anthropic({ apiKey: 'test-key', baseURL: sim.url, maxRetries: 0 });
  const events: SessionEvent[] = [];
  return {
    dir,
    workspace,
    store,
    sim,
    client,
    events,
    git: runGit,
    options(overrides = {}) {
      return {
        project: { id: 'todo', goal: GOAL },
        kind: 'resume',
        store,
        workspace,
        client,
        model: 'sim',
        retry: { baseDelayMs: 1, maxDelayMs: 20, maxRetries: 4 },
        onEvent: (event) => void events.push(event),
        ...overrides,
      };
    },
    async close() {
      await sim.close();
      await store.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
