import { execFileSync } from 'node:child_process';
import {
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CommandSandbox,
  type ProxyDecision,
  openCommandSandbox,
  parseSandboxPolicy,
  startFilteringProxy,
} from '../src/index.js';

/** The sandbox takes away the host, not the tools: an agent's everyday commands work inside. */

let workspace: string;
let sandbox: CommandSandbox;

async function run(command: string) {
  let output = '';
  const result = await sandbox.run(command, { onOutput: (chunk) => (output += chunk) });
  return { ...result, output };
}

describe('real work runs inside the sandbox', () => {
  beforeAll(async () => {
    workspace = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-inside-')));
    sandbox = await openCommandSandbox({
      workspace,
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
    });
  });
  afterAll(async () => {
    await sandbox.dispose();
    rmSync(workspace, { recursive: true, force: true });
  });

  it('git: init, commit and log in the workspace', async () => {
    const result = await run(
      'git init -q -b main && git -c user.name=agent -c user.email=agent@example.com commit -q --allow-empty -m first && git log --format=%s',
    );
    expect(result).toMatchObject({ exitCode: 0, output: 'first\n' });
    const host = execFileSync('git', ['-C', workspace, 'log', '--format=%s'], { encoding: 'utf8' });
    expect(host).toBe('first\n');
  });

  it('node runs a script from the workspace and writes a file the host sees', async () => {
    writeFileSync(
      path.join(workspace, 'sum.js'),
      "require('fs').writeFileSync('out.txt', String(1 + 2));\n",
    );
    const result = await run('node sum.js && cat out.txt');
    expect(result).toMatchObject({ exitCode: 0, output: '3' });
    expect(readFileSync(path.join(workspace, 'out.txt'), 'utf8')).toBe('3');
  });

  it('npm runs the package scripts and tests (offline)', async () => {
    writeFileSync(
      path.join(workspace, 'package.json'),
      JSON.stringify({ name: 'inside', version: '1.0.0', scripts: { test: 'node --test' } }),
    );
    writeFileSync(
      path.join(workspace, 'sum.test.js'),
      "const test = require('node:test'); const assert = require('node:assert');\ntest('adds', () => assert.equal(1 + 2, 3));\n",
    );
    const result = await run('npm test --silent 2>&1');
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/pass 1/);
  });

  it('python3, make and a C compiler', async () => {
    writeFileSync(
      path.join(workspace, 'hello.c'),
      '#include <stdio.h>\nint main(void){puts("hi from c");return 0;}\n',
    );
    writeFileSync(path.join(workspace, 'Makefile'), 'hello: hello.c\n\tcc -o hello hello.c\n');
    const result = await run('python3 -c "print(6*7)" && make -s && ./hello');
    expect(result).toMatchObject({ exitCode: 0, output: '42\nhi from c\n' });
  });

  it('relative paths, the private /tmp and $HOME behave as before', async () => {
    const result = await run(
      'mkdir -p src/a && cd src/a && echo x > f && pwd && echo t > /tmp/t && cat /tmp/t && echo $HOME',
    );
    expect(result.output).toBe(`${workspace}/src/a\nt\n${workspace}\n`);
  });

  it('a failing command reports its exit code', async () => {
    expect((await run('exit 3')).exitCode).toBe(3);
  });

  it('a command reaches bash exactly as written (newlines, quotes, non-ASCII)', async () => {
    const result = await run(`printf '%s|' "one\ntwo" 'three  four' "é $HOME" ''`);
    expect(result).toMatchObject({ exitCode: 0, output: `one\ntwo|three  four|é ${workspace}||` });
  });

  it("disposing leaves no process behind, the next command's waiting launcher included", async () => {
    const own = await openCommandSandbox({
      workspace,
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
    });
    const children = () =>
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .filter((pid) => {
          try {
            return (
              readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ')[1] ===
              String(process.pid)
            );
          } catch {
            return false;
          }
        })
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('mapfile');
          } catch {
            return false;
          }
        });
    const before = children();
    expect((await own.run('true', { onOutput: () => undefined })).exitCode).toBe(0);
    expect(children().filter((pid) => !before.includes(pid))).toHaveLength(1);
    await own.dispose();
    expect(children()).toEqual(before);
  });
});

describe('allowed hosts through the filtering proxy', () => {
  let upstream: http.Server;
  let upstreamPort: number;
  let proxied: CommandSandbox;
  const decisions: ProxyDecision[] = [];

  beforeAll(async () => {
    upstream = http.createServer((_request, response) => response.end('hello through the proxy'));
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamPort = (upstream.address() as net.AddressInfo).port;
    workspace = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-inside-')));
    proxied = await openCommandSandbox({
      workspace,
      setup: {
        mode: 'bubblewrap',
        policy: parseSandboxPolicy({
          network: { allowedHosts: ['localhost', 'registry.example.test'] },
        }),
      },
    });
  });
  afterAll(async () => {
    await proxied.dispose();
    await new Promise((resolve) => upstream.close(resolve));
    rmSync(workspace, { recursive: true, force: true });
  });

  it('a name resolving to loopback is refused even when allowed (Redis stays out of reach)', async () => {
    let output = '';
    await proxied.run(
      `curl -s -o /dev/null -w '%{http_code}' -x "$HTTPS_PROXY" http://localhost:${upstreamPort}/ || node -e "
const http = require('http');
const request = http.request({ host: '127.0.0.1', port: 3128, method: 'GET', path: 'http://localhost:${upstreamPort}/' }, (r) => { console.log('status', r.statusCode); r.resume(); });
request.on('error', (e) => console.log('error', e.code));
request.end();"`,
      { onOutput: (chunk) => (output += chunk) },
    );
    expect(output).toMatch(/403/);
    expect(output).not.toContain('hello through the proxy');
  });

  it('the proxy allows a listed name and refuses every other one, IP literals and ports', async () => {
    const socketPath = path.join(workspace, 'proxy-test.sock');
    const proxy = await startFilteringProxy({
      socketPath,
      allowedHosts: ['registry.example.test', '*.allowed.test'],
      allowedPorts: [443],
      resolve: async (host) =>
        host === 'registry.example.test' ? ['93.184.216.34'] : ['127.0.0.1'],
      onDecision: (decision) => decisions.push(decision),
    });
    const connect = (target: string) =>
      new Promise<string>((resolve) => {
        const request = http.request({ socketPath, method: 'CONNECT', path: target });
        request.on('connect', (response, socket) => {
          socket.destroy();
          resolve(String(response.statusCode));
        });
        request.on('error', (error) => resolve(`error ${error.message}`));
        request.end();
      });
    expect(await connect('evil.example.test:443')).toBe('403');
    expect(await connect('127.0.0.1:6379')).toBe('403');
    expect(await connect('registry.example.test:22')).toBe('403');
    expect(await connect('sub.allowed.test:443')).toBe('403');
    await connect('registry.example.test:443');
    await proxy.close();
    expect(decisions.map((decision) => [decision.host, decision.allowed, decision.reason])).toEqual(
      [
        ['evil.example.test', false, 'host not in the allow-list'],
        ['127.0.0.1', false, 'IP addresses are not allowed'],
        ['registry.example.test', false, 'port not allowed'],
        ['sub.allowed.test', false, 'name resolves to a loopback or private address'],
        ['registry.example.test', true, undefined],
      ],
    );
  });
});
