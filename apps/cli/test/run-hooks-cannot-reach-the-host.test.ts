import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { scriptedCommands, startModelSim } from '@baton/model-sim';
import {
  createHuskyRepo,
  git,
  hostileHookScript,
  plantCanary,
  cliWorld,
} from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';

/**
 * `baton run` on a repository with husky's set-up (`core.hooksPath=.husky`, a pre-commit that
 * runs a script of the working tree). The model rewrites that script to read and overwrite a
 * host canary; the checkpoint's hook runs it, in the sandbox: the canary is neither read nor
 * written, and the hook saw no worker secret.
 */

const world = cliWorld();

describe('baton run: a husky hook running a script the model rewrote', () => {
  it(
    'runs in the sandbox: the host canary is untouched and unread',
    { timeout: 240_000 },
    async () => {
      const repo = await createHuskyRepo(world.dir);
      await mkdir(path.join(world.dir, 'host'));
      const canary = await plantCanary(path.join(world.dir, 'host'));
      expect(await canary.selfCheck()).toBe(true);
      const sim = world.closeAfter(
        await startModelSim({
          port: 0,
          script: scriptedCommands({ commands: [hostileHookScript(canary.path)] }),
        }),
      );
      const home = world.home;
      const result = await runCli(
        [
          'run',
          '--repo',
          repo,
          '--goal',
          'Greeter\n- say hello',
          '--project',
          'hk',
          '--sessions',
          '1',
        ],
        {
          cwd: world.dir,
          env: cliEnv(home, {
            ANTHROPIC_API_KEY: 'sk-ant-canary-hook-must-not-see',
            ANTHROPIC_BASE_URL: sim.url,
            BATON_CHECKPOINT_INTERVAL_MS: '0',
          }),
        },
      );
      expect(result.stderr).toBe('');
      // The hook ran the rewritten script at the checkpoints (its report is on the branch) ...
      const report = git(repo, 'show', 'baton/hk:hook-report.txt');
      expect(report).toContain('canary unreachable');
      expect(report).toContain('canary unwritable');
      // ... with the workspace as HOME and none of the worker's environment.
      // HOME is the workspace (under Baton's home), never the worker's.
      expect(report.split('\n')).toContain(
        `home=${path.join(home, 'projects', 'hk', 'workspace')} key=[] redis=[]`,
      );
      expect(report).not.toContain('canary-content-outside');
      expect(report).not.toContain('sk-ant-canary');
      expect(await canary.touched()).toEqual({ read: false, written: false });
    },
  );
});
