import { mkdtemp, mkdir, readFile, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseSandboxPolicy } from '@baton/workspace';
import { createBashTool as createBashToolOnly } from './bash.js';
import type { SessionTool } from './types.js';
import { createTextEditorTool } from './text-editor.js';

/** Every bash tool of a test, disposed after it so no sandbox tmp or process outlives the test. */
const opened: SessionTool[] = [];
function createBashTool(options: Parameters<typeof createBashToolOnly>[0]): SessionTool {
  const tool = createBashToolOnly(options);
  opened.push(tool);
  return tool;
}

let base: string;
let root: string;
let outside: string;

beforeEach(async () => {
  base = await realpath(await mkdtemp(path.join(tmpdir(), 'baton-ws-')));
  root = path.join(base, 'workspace');
  outside = path.join(base, 'outside');
  await mkdir(root);
  await mkdir(outside);
  await writeFile(path.join(outside, 'secret.txt'), 'top secret\n');
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map(async (tool) => tool.dispose?.()));
  await rm(base, { recursive: true, force: true });
});

describe('text editor stays inside the workspace', () => {
  it('creates, views, replaces and inserts with relative paths', async () => {
    const editor = createTextEditorTool({ root });
    expect(
      await editor.execute({ command: 'create', path: 'src/a.txt', file_text: 'one\ntwo\n' }),
    ).toEqual({
      content: 'File created successfully at: src/a.txt',
      isError: false,
    });
    const viewed = await editor.execute({ command: 'view', path: 'src/a.txt' });
    expect(viewed.content).toBe(
      "Here's the content of src/a.txt with line numbers:\n     1\tone\n     2\ttwo\n     3\t",
    );
    const replaced = await editor.execute({
      command: 'str_replace',
      path: 'src/a.txt',
      old_str: 'two',
      new_str: 'TWO',
    });
    expect(replaced.isError).toBe(false);
    const inserted = await editor.execute({
      command: 'insert',
      path: 'src/a.txt',
      insert_line: 0,
      insert_text: 'zero',
    });
    expect(inserted.isError).toBe(false);
    expect(await readFile(path.join(root, 'src/a.txt'), 'utf8')).toBe('zero\none\nTWO\n');
    const listing = await editor.execute({ command: 'view', path: '.' });
    expect(listing.content).toContain('\tsrc/a.txt');
  });

  it('accepts an absolute path inside the workspace', async () => {
    const editor = createTextEditorTool({ root });
    const result = await editor.execute({
      command: 'create',
      path: path.join(root, 'b.txt'),
      file_text: 'b',
    });
    expect(result.isError).toBe(false);
  });

  it.each([
    ['a ../ climb', () => '../outside/secret.txt'],
    ['a nested ../ climb', () => 'src/../../outside/secret.txt'],
    ['an absolute path outside', () => path.join(outside, 'secret.txt')],
    ['/etc/passwd', () => '/etc/passwd'],
  ])('refuses %s for view and create', async (_name, target) => {
    const editor = createTextEditorTool({ root });
    const viewed = await editor.execute({ command: 'view', path: target() });
    expect(viewed.isError).toBe(true);
    expect(viewed.content).toContain('outside the workspace');
    const created = await editor.execute({ command: 'create', path: target(), file_text: 'x' });
    expect(created.isError).toBe(true);
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('refuses a symlink that points outside, as the file and as a parent directory', async () => {
    await symlink(path.join(outside, 'secret.txt'), path.join(root, 'link.txt'));
    await symlink(outside, path.join(root, 'linkdir'));
    const editor = createTextEditorTool({ root });
    for (const target of ['link.txt', 'linkdir/secret.txt', 'linkdir/new.txt']) {
      const viewed = await editor.execute({ command: 'view', path: target });
      expect(viewed.isError, target).toBe(true);
      expect(viewed.content).toContain('symbolic link');
      const created = await editor.execute({ command: 'create', path: target, file_text: 'pwned' });
      expect(created.isError, target).toBe(true);
    }
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
  });

  it('refusals never show the host path of the workspace', async () => {
    const editor = createTextEditorTool({ root });
    const result = await editor.execute({ command: 'view', path: '../outside' });
    expect(result.content).not.toContain(base);
  });

  it('str_replace reports missing and repeated old_str without writing', async () => {
    const editor = createTextEditorTool({ root });
    await editor.execute({ command: 'create', path: 'x.txt', file_text: 'a\na\n' });
    const repeated = await editor.execute({
      command: 'str_replace',
      path: 'x.txt',
      old_str: 'a',
      new_str: 'b',
    });
    expect(repeated).toEqual({
      content:
        'Error: No replacement was performed. Multiple occurrences of old_str `a` in lines: 1, 2. Please ensure it is unique',
      isError: true,
    });
    const missing = await editor.execute({
      command: 'str_replace',
      path: 'x.txt',
      old_str: 'zz',
      new_str: 'b',
    });
    expect(missing.content).toBe(
      'Error: No replacement was performed, old_str `zz` did not appear verbatim in x.txt.',
    );
  });
});

describe('bash runs confined commands', () => {
  it('runs in the workspace root with a clean environment', async () => {
    process.env.BATON_TEST_SECRET = 'sk-ant-should-not-leak';
    const bash = createBashTool({ root });
    const result = await bash.execute({ command: 'pwd; echo "key=${BATON_TEST_SECRET:-none}"' });
    delete process.env.BATON_TEST_SECRET;
    expect(result).toEqual({ content: `${root}\nkey=none\n`, isError: false });
  });

  it('reports a non-zero exit code', async () => {
    const bash = createBashTool({ root });
    const result = await bash.execute({ command: 'echo failing >&2; exit 3' });
    expect(result.content).toBe('failing\n\n[exit code 3]');
  });

  it.each([
    ['cat ../outside/secret.txt'],
    [`cat ${'/'}etc/passwd`],
    ['ls ~'],
    ['cd .. && ls'],
    ['echo hi > /tmp/baton-escape.txt'],
    ['sudo ls'],
    ['rm -rf /'],
  ])('without the sandbox (--no-sandbox) refuses `%s`', async (command) => {
    const bash = createBashTool({ root, sandbox: { mode: 'off', reason: 'opted-out' } });
    const result = await bash.execute({ command });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(/^Refused: /);
  });

  it('allows system tools and URL-like strings that are not host paths', async () => {
    const bash = createBashTool({ root });
    const result = await bash.execute({
      command: 'echo "/api/todos" | /usr/bin/env cat > out.txt 2>/dev/null && cat out.txt',
    });
    expect(result).toEqual({ content: '/api/todos\n', isError: false });
  });

  it('an allow-list refuses every other program', async () => {
    const bash = createBashTool({ root, commands: { allow: ['echo', 'node'] } });
    expect((await bash.execute({ command: 'echo ok' })).isError).toBe(false);
    const refused = await bash.execute({ command: 'echo ok | wc -l' });
    expect(refused).toEqual({
      content: 'Refused: the command policy does not allow `wc` in the workspace shell.',
      isError: true,
    });
  });

  it('stops a command at the timeout, with its whole process group', async () => {
    const bash = createBashTool({
      root,
      sandbox: {
        mode: 'bubblewrap',
        policy: parseSandboxPolicy({ limits: { commandTimeoutMs: 300 } }),
      },
    });
    const started = Date.now();
    const result = await bash.execute({ command: 'echo started; sleep 30 & sleep 30' });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.isError).toBe(true);
    expect(result.content).toContain('timed out');
    expect(result.content).toContain('started');
    // The tool-call event carries the limit that stopped it, naming the setting.
    expect(result.limit).toBe(
      'The command timed out after 300 ms (sandbox limit commandTimeoutMs) and was stopped.',
    );
  });

  it('stops a command when the session signal aborts', async () => {
    const bash = createBashTool({ root });
    const controller = new AbortController();
    const pending = bash.execute({ command: 'echo go; sleep 30' }, controller.signal);
    setTimeout(() => controller.abort(), 200);
    const result = await pending;
    expect(result.isError).toBe(true);
    expect(result.content).toContain('session is ending');
  });

  it('caps long output and keeps the head and the tail', async () => {
    const bash = createBashTool({ root, maxOutputChars: 1_000 });
    const result = await bash.execute({ command: 'seq 1 20000' });
    expect(result.content.length).toBeLessThan(1_200);
    expect(result.content.startsWith('1\n2\n')).toBe(true);
    expect(result.content.trimEnd().endsWith('20000')).toBe(true);
    expect(result.content).toMatch(/characters of output cut/);
  });
});
