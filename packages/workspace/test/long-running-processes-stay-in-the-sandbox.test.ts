import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomHex } from '@baton/test-support';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommandSandbox, openCommandSandbox, parseSandboxPolicy } from '../src/index.js';

/**
 * `startProcess` runs a long-lived program (an MCP server) with pipes, under the isolation of a
 * command: it talks over stdin/stdout, sees the workspace and the paths it was given read-only,
 * not the rest of the host, and it and everything it started end with `stop` or `dispose`.
 */

let base: string;
let workspace: string;
let shared: string;
let canary: string;
const SECRET = `canary-${randomHex(12)}`;

function readLine(stream: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer | string) => {
      buffer += chunk.toString();
      const index = buffer.indexOf('\n');
      if (index >= 0) {
        stream.off('data', onData);
        resolve(buffer.slice(0, index));
      }
    };
    stream.on('data', onData);
    stream.once('end', () => reject(new Error(`stream ended before a line: ${buffer}`)));
  });
}

beforeAll(() => {
  base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-process-')));
  workspace = path.join(base, 'workspace');
  shared = path.join(base, 'shared');
  canary = path.join(base, 'canary.txt');
  mkdirSync(workspace);
  mkdirSync(shared);
  writeFileSync(path.join(shared, 'tool.sh'), 'echo "tool from a read-only path"\n');
  writeFileSync(canary, SECRET);
});

afterAll(() => {
  rmSync(base, { recursive: true, force: true });
});

describe('a long-running process in the sandbox', () => {
  let sandbox: CommandSandbox;
  beforeAll(async () => {
    sandbox = await openCommandSandbox({
      workspace,
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
    });
  });
  afterAll(async () => {
    await sandbox.dispose();
  });

  it('talks over its pipes, sees the given paths read-only and not the rest of the host', async () => {
    const script = [
      'while read -r line; do',
      '  case "$line" in',
      `    canary) cat ${canary} 2>&1 | head -c 200 | tr '\\n' ' '; echo ;;`,
      `    shared) bash ${path.join(shared, 'tool.sh')} ;;`,
      `    write) (echo x > ${path.join(shared, 'new.txt')}) 2>&1 | tr '\\n' ' '; echo ;;`,
      '    env) echo "$SERVER_TOKEN $HOME" ;;',
      '    *) echo "echo:$line" ;;',
      '  esac',
      'done',
    ].join('\n');
    const child = sandbox.startProcess(['/bin/bash', '-c', script], {
      env: { SERVER_TOKEN: 'given' },
      readOnlyPaths: [shared],
    });
    child.stdin.write('hello\n');
    expect(await readLine(child.stdout)).toBe('echo:hello');
    child.stdin.write('shared\n');
    expect(await readLine(child.stdout)).toBe('tool from a read-only path');
    child.stdin.write('write\n');
    expect(await readLine(child.stdout)).toMatch(/Read-only file system/);
    child.stdin.write('canary\n');
    const canaryLine = await readLine(child.stdout);
    expect(canaryLine).not.toContain(SECRET);
    expect(canaryLine).toMatch(/No such file or directory/);
    child.stdin.write('env\n');
    expect(await readLine(child.stdout)).toBe(`given ${workspace}`);
    await child.stop();
    const exit = await child.exited;
    expect(exit.exitCode === 0).toBe(false);
  });

  it('ends with dispose, with every process it started', async () => {
    const other = await openCommandSandbox({
      workspace,
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
    });
    const marker = `sleeper-${randomHex(6)}`;
    const child = other.startProcess([
      '/bin/bash',
      '-c',
      `(exec -a ${marker} sleep 600) & echo started; wait`,
    ]);
    expect(await readLine(child.stdout)).toBe('started');
    const running = () =>
      readdirSync('/proc')
        .filter((entry) => /^\d+$/.test(entry))
        .some((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker);
          } catch {
            return false;
          }
        });
    expect(running()).toBe(true);
    await other.dispose();
    await child.exited;
    expect(running()).toBe(false);
    expect(() => other.startProcess(['/bin/true'])).toThrow(/closed/);
  });
});
