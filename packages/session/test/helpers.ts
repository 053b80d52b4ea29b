import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { createFileSystemStore, type MemoryStore } from '@baton/core';
import {
  startModelSim,
  type ModelSim,
  type ModelSimOptions,
  type SimScript,
  type SimScriptResult,
} from '@baton/model-sim';
import { openProjectWorkspace, type ProjectWorkspace } from '@baton/workspace';
import { runSession, type RunSessionOptions, type SessionEvent } from '../src/index.js';

/** A temp project: a workspace with checkpoints, a filesystem memory store and a simulator. */
export interface Harness {
  dir: string;
  workspace: string;
  /** Baton's clone, pushing to a bare repository Baton owns under `dir` (undefined with `git: false`). */
  projectWorkspace: ProjectWorkspace | undefined;
  store: MemoryStore;
  sim: ModelSim;
  client: Anthropic;
  events: SessionEvent[];
  /** Options for runSession with fast retries and test defaults. */
  options(overrides?: Partial<RunSessionOptions>): RunSessionOptions;
  git(...args: string[]): string;
  close(): Promise<void>;
}

const GOAL = [
  'A tiny todo command line app.',
  '- Add a todo with a title',
  '- List todos',
  '- Mark a todo as done',
].join('\n');

/** A script that gives `answer` to the first request and leaves the rest to the scripted agent. */
export function firstAnswerOnly(answer: SimScriptResult): SimScript {
  let sent = false;
  return () => {
    if (sent) return undefined;
    sent = true;
    return answer;
  };
}

let template: Promise<string> | undefined;

/**
 * The memory of a freshly initialised project (made once per test file by a real init session
 * on the simulator), so tests of resume sessions do not each pay for an init session.
 */
function initialisedTemplate(): Promise<string> {
  template ??= (async () => {
    const seedHarness = await createHarness({}, { git: false });
    const result = await runSession(seedHarness.options({ kind: 'init' }));
    if (result.outcome !== 'completed') throw new Error(`template init failed: ${result.reason}`);
    await seedHarness.sim.close();
    await seedHarness.store.close();
    return path.join(seedHarness.dir, 'memories');
  })();
  return template;
}

/** Remove the template made by `initialisedTemplate` (call in afterAll). */
export async function removeTemplate(): Promise<void> {
  if (template === undefined) return;
  const memories = await template.catch(() => undefined);
  template = undefined;
  if (memories !== undefined) await rm(path.dirname(memories), { recursive: true, force: true });
}

export async function createHarness(
  simOptions: ModelSimOptions = {},
  options: { git?: boolean; initialised?: boolean } = {},
): Promise<Harness> {
  const git = options.git ?? true;
  const dir = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-session-')));
  const workspace = path.join(dir, 'workspace');
  await mkdir(workspace);
  if (options.initialised === true) {
    await cp(await initialisedTemplate(), path.join(dir, 'memories'), { recursive: true });
  }
  const runGit = (...args: string[]) =>
    execFileSync('git', args, {
      cwd: workspace,
      encoding: 'utf8',
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    });
  const projectWorkspace = git
    ? openProjectWorkspace({
        home: dir,
        projectId: 'todo',
        repo: null,
        baseCommit: null,
        dir: workspace,
      })
    : undefined;
  await projectWorkspace?.prepare(null);
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
    projectWorkspace,
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
        checkpoints: projectWorkspace === undefined ? undefined : { target: projectWorkspace },
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
