import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { afterEach, beforeEach } from 'vitest';
import { startModelSim } from '../../src/index.js';
import type { ModelSim } from '../../src/index.js';
import { createMemoryStandIn } from './memory-stand-in.js';
import type { MemoryStandIn } from './memory-stand-in.js';
import { createWorkspaceTools } from './workspace-tools.js';
import type { WorkspaceTools } from './workspace-tools.js';

/** What each test of a file that calls `useSimClient` gets, fresh for every test. */
export interface SimClientFixture {
  sim: ModelSim;
  /** The real SDK client pointed at `sim`, without retries (so a fault shows up as one error). */
  client: Anthropic;
}

async function startSimClient(): Promise<SimClientFixture> {
  const sim = await startModelSim();
  return { sim, client: new Anthropic({ apiKey: 'test', baseURL: sim.url, maxRetries: 0 }) };
}

/**
 * Registers the beforeEach/afterEach that start a simulator and a client for every test of the
 * file, and hands them to `use` before each test. After each test it closes the simulator.
 */
export function useSimClient(use: (fixture: SimClientFixture) => void): void {
  let current: SimClientFixture | undefined;
  beforeEach(async () => {
    current = await startSimClient();
    use(current);
  });
  afterEach(async () => {
    const sim = current?.sim;
    current = undefined;
    await sim?.close();
  });
}

/** What each test of a file that calls `useSimSession` gets, fresh for every test. */
export interface SimSessionFixture extends SimClientFixture {
  memory: MemoryStandIn;
  workspace: WorkspaceTools;
  /** The workspace's temp dir. */
  root: string;
}

/**
 * Registers the beforeEach/afterEach that start a simulator, a client, a memory stand-in and a
 * workspace in a temp dir named `${tempPrefix}...` for every test of the file, and hands them to
 * `use` before each test. After each test it closes the simulator and removes the dir.
 */
export function useSimSession(
  use: (fixture: SimSessionFixture) => void,
  options: { tempPrefix: string },
): void {
  let current: SimSessionFixture | undefined;
  beforeEach(async () => {
    const { sim, client } = await startSimClient();
    const root = await mkdtemp(path.join(tmpdir(), options.tempPrefix));
    current = {
      sim,
      client,
      memory: createMemoryStandIn(),
      workspace: createWorkspaceTools(root),
      root,
    };
    use(current);
  });
  afterEach(async () => {
    if (current === undefined) return;
    const { sim, root } = current;
    current = undefined;
    await sim.close();
    await rm(root, { recursive: true, force: true });
  });
}
