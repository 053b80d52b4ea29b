import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { scriptedCommands, startModelSim } from '@baton/model-sim';
import { createUserRepo, git, cliWorld } from '@baton/test-support';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './helpers.js';

/**
 * `baton run` with the workspace disk limit from `BATON_SANDBOX` (`limits.workspaceMb`): the model
 * that fills its workspace is told in one line, no checkpoint carries what it wrote to the user's
 * repository, and the checkpoint events and the project's pause say why.
 */

const world = cliWorld();

describe('baton run and the workspace limits', () => {
  it(
    'tells the model, keeps the files off the branch, and says why in events',
    { timeout: 240_000 },
    async () => {
      const repo = await createUserRepo(world.dir);
      const results: { output: string; isError: boolean }[] = [];
      const sim = world.closeAfter(
        await startModelSim({
          port: 0,
          script: scriptedCommands({
            commands: [
              'head -c 800000 /dev/urandom > blob1.bin && head -c 800000 /dev/urandom > blob2.bin',
            ],
            onResult: (result) => results.push(result),
          }),
        }),
      );
      const result = await runCli(
        [
          'run',
          '--repo',
          repo,
          '--goal',
          'Greeter\n- say hello',
          '--project',
          'full',
          '--sessions',
          '1',
        ],
        {
          cwd: world.dir,
          env: cliEnv(world.home, {
            ANTHROPIC_API_KEY: 'test-key',
            ANTHROPIC_BASE_URL: sim.url,
            BATON_SANDBOX: '{"limits":{"workspaceMb":1}}',
            BATON_CHECKPOINT_INTERVAL_MS: '0',
          }),
        },
      );
      expect(result.stderr).toBe('');
      // The model heard it once, in one line after the command's output.
      expect(results).toHaveLength(1);
      expect(results[0]?.isError).toBe(true);
      expect(results[0]?.output).toMatch(
        /^\(no output\)\nThe workspace is over its disk limit: 1\.\d MiB used of 1\.0 MiB \(sandbox limit workspaceMb\); delete files/,
      );
      expect(results[0]?.output).not.toContain(world.dir);
      // Nothing it wrote reached the user's repository.
      const branches = git(repo, 'branch', '--list', 'baton/full');
      if (branches !== '') {
        expect(git(repo, 'ls-tree', '-r', '--name-only', 'baton/full')).not.toContain('blob1.bin');
      }
      // Every checkpoint while over says why, in the events.
      const events = (
        await readFile(path.join(world.home, 'projects', 'full', 'events.jsonl'), 'utf8')
      )
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; error?: string; limit?: string });
      // The tool call that went over carries the limit it hit, as the model was told it.
      const calls = events.filter((event) => event.type === 'tool-call');
      expect(calls.filter((event) => event.limit !== undefined)).toEqual([
        expect.objectContaining({
          limit: expect.stringMatching(
            /^The workspace is over its disk limit: .* \(sandbox limit workspaceMb\)/,
          ),
        }),
      ]);
      const refused = events.filter(
        (event) => event.type === 'checkpoint' && event.error !== undefined,
      );
      expect(refused.length).toBeGreaterThan(0);
      for (const event of refused) {
        expect(event.error).toMatch(
          /^The workspace is over its disk limit: .* \(sandbox limit workspaceMb\)/,
        );
      }
      expect(result.stdout).toContain('sandbox limit workspaceMb');
    },
  );
});
