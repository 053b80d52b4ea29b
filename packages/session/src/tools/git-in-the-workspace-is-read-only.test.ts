import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_GIT_NOTE, openProjectWorkspace } from '@baton/workspace';
import { BATON_COMMITS_REFUSAL } from '../internal/command-policy.js';
import { createBashTool } from './bash.js';
import type { SessionTool } from './types.js';

let home: string;
let bash: SessionTool;

describe('git in the bash tool', () => {
  beforeAll(async () => {
    home = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-bash-git-')));
    const workspace = openProjectWorkspace({ home, projectId: 'p', repo: null, baseCommit: null });
    await workspace.prepare(null);
    await writeFile(path.join(workspace.dir, 'a.txt'), 'one\n');
    await workspace.checkpoint({ subject: 'baton checkpoint' });
    await writeFile(path.join(workspace.dir, 'a.txt'), 'two\n');
    bash = createBashTool({ root: await realpath(workspace.dir), gitDir: workspace.gitDir });
  });
  afterAll(async () => {
    await bash.dispose?.();
    await rm(home, { recursive: true, force: true });
  });

  it('reads the project history', async () => {
    const result = await bash.execute({ command: 'git log --format=%s && git status --short' });
    expect(result).toEqual({ content: 'baton checkpoint\n M a.txt\n', isError: false });
  });

  it('tells the model that Baton commits, without host paths', async () => {
    const result = await bash.execute({ command: 'git add a.txt' });
    expect(result.content).toContain(READ_ONLY_GIT_NOTE);
    expect(result.content).toContain('[exit code 128]');
    expect(result.content).not.toContain(home);
  });

  it('refuses `git commit` before it runs, saying that Baton commits', async () => {
    const result = await bash.execute({ command: 'git commit -qam "my work"' });
    expect(result).toEqual({ content: BATON_COMMITS_REFUSAL, isError: true });
  });
});
