import { mkdir, mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProjectWorkspace } from '@baton/workspace';
import { BATON_COMMITS_REFUSAL, checkCommand } from '../internal/command-policy.js';
import { createBashTool } from './bash.js';
import type { SessionTool } from './types.js';

/**
 * Commands coding agents really run in a project (collected from agent transcripts: looking
 * around, reading system facts, scratch files in /tmp, climbing out of a sub-directory, git
 * reads, the project's own scripts). With the sandbox as the boundary, the guard may refuse at
 * most one of them: each refusal costs a real model a turn and teaches it to distrust its tools.
 */
const ORDINARY_COMMANDS = [
  'ls -la',
  'pwd',
  'cat package.json',
  'cat /etc/os-release',
  'node -v > /tmp/v.txt && cat /tmp/v.txt',
  'ls ~',
  'cat ~/package.json',
  'echo $HOME && cd ~ && pwd',
  'cd src && cat ../package.json',
  'cd src && ls .. && cd ..',
  'head -c 100 /dev/urandom | wc -c',
  'cat /proc/cpuinfo | head -5',
  'echo b > /tmp/b.txt && diff a.txt /tmp/b.txt; echo "diff exit $?"',
  'grep -rn "TODO" . --include=*.js',
  'find . -name "*.json" -not -path "./node_modules/*"',
  'git status --short',
  'git diff --stat',
  'git log --oneline -5',
  'wc -l src/*.js',
  'sed -n 1,5p package.json',
  'which node npm',
  'uname -a',
  'df -h .',
  'mktemp -d',
  'cp package.json /tmp/pkg.bak && ls /tmp',
  'npm --version',
  'node -e "console.log(require(\'os\').tmpdir())"',
  'ls /usr/local/bin /usr/lib | head -3',
  'sort data.txt | uniq -c | sort -rn | head',
  'tar czf /tmp/src.tgz src && tar tzf /tmp/src.tgz',
  'rm -rf node_modules dist',
  'ps aux | head -3',
  'nproc && free -m',
  'date -u +%Y-%m-%dT%H:%M:%SZ',
  'npm test',
  'node src/index.js 2>&1 | tee /tmp/run.log',
  'cat /etc/passwd | head -1',
  'env | sort | head -3',
  'git add -A && git commit -m "wip"',
];

let home: string;
let root: string;
let bash: SessionTool;

beforeAll(async () => {
  home = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-guard-corpus-')));
  const workspace = openProjectWorkspace({ home, projectId: 'p', repo: null, baseCommit: null });
  await workspace.prepare(null);
  root = await realpath(workspace.dir);
  await mkdir(path.join(root, 'src'));
  await writeFile(
    path.join(root, 'package.json'),
    `${JSON.stringify({ name: 'app', scripts: { test: 'node src/index.js' } }, null, 2)}\n`,
  );
  await writeFile(path.join(root, 'src', 'index.js'), "// TODO: more\nconsole.log('ok');\n");
  await writeFile(path.join(root, 'a.txt'), 'a\n');
  await writeFile(path.join(root, 'data.txt'), 'x\ny\nx\n');
  await workspace.checkpoint({ subject: 'start' });
  bash = createBashTool({ root, gitDir: workspace.gitDir });
});

afterAll(async () => {
  await bash.dispose?.();
  await rm(home, { recursive: true, force: true });
});

describe('the command guard in the sandbox', () => {
  it(`refuses at most 1 of ${ORDINARY_COMMANDS.length} ordinary commands, and they run`, async () => {
    expect(ORDINARY_COMMANDS.length).toBeGreaterThanOrEqual(30);
    const refused: string[] = [];
    const failed: string[] = [];
    for (const command of ORDINARY_COMMANDS) {
      const result = await bash.execute({ command });
      if (result.content.startsWith('Refused:')) refused.push(command);
      else if (result.isError || /\[exit code \d+\]$/.test(result.content)) {
        failed.push(`${command}: ${result.content}`);
      }
    }
    expect(refused).toEqual(['git add -A && git commit -m "wip"']);
    // Not refused is not enough: each ran and did what it says inside the sandbox.
    expect(failed).toEqual([]);
  });

  it('still refuses wiping the workspace and a fork bomb, which the sandbox allows', () => {
    for (const command of ['rm -rf /', 'rm -rf ~', 'rm -rf ~/', 'rm -rf $HOME', 'rm -fr /*']) {
      expect(checkCommand(command, root, {}, { sandboxed: true }), command).toMatch(/^Refused: /);
    }
    expect(checkCommand(':(){ :|:& };:', root, {}, { sandboxed: true })).toMatch(/^Refused: /);
    expect(checkCommand('rm -rf ./build', root, {}, { sandboxed: true })).toBeNull();
  });

  it("refuses committing Baton's repository with the reason, not the agent's own repositories", () => {
    const sandboxed = { sandboxed: true };
    expect(checkCommand('git commit -am wip', root, {}, sandboxed)).toBe(BATON_COMMITS_REFUSAL);
    expect(checkCommand('git push origin HEAD', root, {}, sandboxed)).toBe(BATON_COMMITS_REFUSAL);
    expect(checkCommand('git -c user.name=x commit -m y', root, {}, sandboxed)).toBe(
      BATON_COMMITS_REFUSAL,
    );
    for (const own of [
      'cd /tmp/lib && git commit -m first',
      'git -C /tmp/lib commit -m first',
      'mkdir /tmp/r && git init /tmp/r && git -C /tmp/r commit --allow-empty -m x',
      'git log --grep commit',
    ]) {
      expect(checkCommand(own, root, {}, sandboxed), own).toBeNull();
    }
  });

  it('without the sandbox (--no-sandbox) keeps refusing paths outside the workspace', () => {
    const unsandboxed = ORDINARY_COMMANDS.filter(
      (command) => checkCommand(command, root, {}, { sandboxed: false }) !== null,
    );
    for (const command of [
      'cat /etc/os-release',
      'ls ~',
      'cd src && cat ../package.json',
      'cat /proc/cpuinfo | head -5',
      'node -v > /tmp/v.txt && cat /tmp/v.txt',
    ]) {
      expect(unsandboxed).toContain(command);
    }
  });
});
