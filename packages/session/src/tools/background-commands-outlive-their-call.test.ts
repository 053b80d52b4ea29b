import { mkdtemp, readFile, readdir, readlink, realpath, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool } from './bash.js';

/**
 * The bash tool's background path, in the real sandbox: a command ending in `&` returns at once
 * and its server keeps running on the session's loopback, where later commands reach it; its
 * output goes to /tmp/background-N.log; `&&` and an inner `&` are ordinary; the server ends when
 * the tool is disposed (the session ends).
 */

let root: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(path.join(os.tmpdir(), 'baton-background-')));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

/** Host processes running in `directory` whose command line contains `text`. */
async function processesIn(directory: string, text: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!(await readlink(`/proc/${entry}/cwd`)).startsWith(directory)) continue;
      if ((await readFile(`/proc/${entry}/cmdline`, 'utf8')).includes(text)) count += 1;
    } catch {
      // Gone, or not ours.
    }
  }
  return count;
}

describe('bash: commands ending in &', () => {
  it('run in the background on the session loopback and end with the session', async () => {
    const bash = createBashTool({ root });
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    try {
      const started = await bash.execute({
        command: `node -e "require('node:http').createServer((q, r) => r.end('bg ok')).listen(${port}, '127.0.0.1', () => console.log('listening'))" &`,
      });
      expect(started).toEqual({
        content: expect.stringMatching(
          /^Started in the background \(job 1\); its output goes to \/tmp\/background-1\.log\. It keeps running/,
        ),
        isError: false,
      });
      const fetched = await bash.execute({
        command: `node -e "const h = require('node:http'); let n = 0; const look = () => h.get('http://127.0.0.1:${port}/', (r) => { r.setEncoding('utf8'); r.on('data', (d) => console.log(d)); }).on('error', () => (++n < 200 ? setTimeout(look, 50) : process.exit(1))); look();"; cat /tmp/background-1.log`,
      });
      expect(fetched).toEqual({ content: 'bg ok\nlistening\n', isError: false });
      expect(await processesIn(root, 'bg ok')).toBeGreaterThan(0);
      // Not background: `&&`, and `&` inside a command (its job ends with the command).
      expect(await bash.execute({ command: 'echo a && echo b' })).toEqual({
        content: 'a\nb\n',
        isError: false,
      });
      expect(await bash.execute({ command: 'sleep 30 & echo inner' })).toEqual({
        content: 'inner\n',
        isError: false,
      });
      expect(await processesIn(root, 'sleep')).toBe(0);
    } finally {
      await bash.dispose?.();
    }
    expect(await processesIn(root, 'bg ok')).toBe(0);
  });
});
