import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { REDIS_URL, randomHex, waitFor } from '@baton/test-support';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CommandSandbox,
  openCommandSandbox,
  parseSandboxPolicy,
  probeSandbox,
} from '../src/index.js';
import { SANDBOX_PATH } from '../src/sandbox/bubblewrap.js';

/**
 * An attacker's view of the sandbox: every attempt below is a command a hostile model (or a
 * README it read) could send. Canaries sit everywhere the issue names; after each attempt none
 * was read (its secret is not in the output) or written (its content and the directory listing
 * are unchanged), and the worker (this process) still runs commands.
 */

const SECRET = `canary-${randomHex(12)}`;
const ENV_SECRET = `env-canary-${randomHex(12)}`;
const ENV_NAME = 'BATON_HOSTILE_TEST_SECRET';
/**
 * An entry of this process's environment as the kernel shows it in /proc/<pid>/environ (its
 * environment at exec, where a worker's API key sits): the host PATH, which the sandbox's differs from.
 */
const HOST_ENV_ENTRY = readFileSync('/proc/self/environ', 'utf8')
  .split('\0')
  .find((entry) => entry.startsWith('PATH='))!;

let base: string;
let home: string;
let workspace: string;
let otherWorkspace: string;
let memoryStore: string;
let outside: string;
let hostTmpCanary: string;
let sandbox: CommandSandbox;
let redis: Redis;
let redisCanaryKey: string;
let dashboard: http.Server;
let dashboardPort: number;
let dashboardHits = 0;
let hostSocket: net.Server;
let hostSocketPath: string;
let hostSocketHits = 0;
let markerSeq = 0;

const canaryFiles = (): string[] => [
  path.join(outside, 'secret.txt'),
  path.join(otherWorkspace, 'secret.txt'),
  path.join(memoryStore, 'progress.md'),
  path.join(home, 'config.json'),
  hostTmpCanary,
];
let fingerprint: string;

function snapshot(): string {
  const hash = createHash('sha256');
  for (const file of canaryFiles()) {
    hash
      .update(file)
      .update(readFileSync(file))
      .update(String(statSync(file).mtimeMs));
  }
  for (const directory of [
    outside,
    otherWorkspace,
    memoryStore,
    home,
    path.dirname(hostTmpCanary),
  ]) {
    hash.update(readdirSync(directory).sort().join('\n'));
  }
  return hash.digest('hex');
}

function hostProcesses(marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(pid);
    } catch {
      // Exited while listing.
    }
  }
  return found;
}

async function run(command: string, timeoutMs = 20_000) {
  let output = '';
  const result = await sandbox.run(command, {
    timeoutMs,
    onOutput: (chunk) => {
      output += chunk;
    },
  });
  return { ...result, output };
}

/** One hostile attempt: whatever it prints, no canary leaks and none changes. */
async function attempt(command: string, timeoutMs?: number) {
  const result = await run(command, timeoutMs);
  expect(result.output).not.toContain(SECRET);
  expect(result.output).not.toContain(ENV_SECRET);
  expect(result.output).not.toContain(HOST_ENV_ENTRY);
  expect(snapshot()).toBe(fingerprint);
  expect(await redis.get(redisCanaryKey)).toBe(SECRET);
  expect(dashboardHits).toBe(0);
  expect(hostSocketHits).toBe(0);
  return result;
}

describe('hostile commands stay inside the sandbox', () => {
  beforeAll(async () => {
    const probe = probeSandbox();
    // No skipping: a machine that cannot sandbox fails this suite (.ci/run installs bubblewrap).
    if (!probe.usable) throw new Error(`the sandbox is unusable here: ${probe.problem}`);
    process.env[ENV_NAME] = ENV_SECRET;
    base = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'baton-hostile-')));
    home = path.join(base, 'baton-home');
    workspace = path.join(home, 'workspaces', 'project-a');
    otherWorkspace = path.join(home, 'workspaces', 'project-b');
    memoryStore = path.join(home, 'memory', 'project-a');
    outside = path.join(base, 'outside');
    for (const directory of [workspace, otherWorkspace, memoryStore, outside]) {
      mkdirSync(directory, { recursive: true });
    }
    writeFileSync(path.join(outside, 'secret.txt'), SECRET);
    writeFileSync(path.join(otherWorkspace, 'secret.txt'), SECRET);
    writeFileSync(path.join(memoryStore, 'progress.md'), SECRET);
    writeFileSync(path.join(home, 'config.json'), JSON.stringify({ apiKey: SECRET }));
    const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'baton-hostile-tmp-'));
    hostTmpCanary = path.join(tmpDir, 'secret.txt');
    writeFileSync(hostTmpCanary, SECRET);

    redis = new Redis(REDIS_URL);
    redisCanaryKey = `baton-hostile-${randomHex(8)}`;
    await redis.set(redisCanaryKey, SECRET, 'EX', 600);
    dashboard = http.createServer((_request, response) => {
      dashboardHits += 1;
      response.end(SECRET);
    });
    await new Promise<void>((resolve) => dashboard.listen(0, '127.0.0.1', resolve));
    dashboardPort = (dashboard.address() as net.AddressInfo).port;
    hostSocketPath = path.join(outside, 'host.sock');
    hostSocket = net.createServer((socket) => {
      hostSocketHits += 1;
      socket.end(SECRET);
    });
    await new Promise<void>((resolve) => hostSocket.listen(hostSocketPath, resolve));

    sandbox = await openCommandSandbox({
      workspace,
      setup: {
        mode: 'bubblewrap',
        policy: parseSandboxPolicy({ limits: { memoryMb: 256, processes: 64 } }),
      },
    });
    fingerprint = snapshot();
  });

  afterAll(async () => {
    delete process.env[ENV_NAME];
    await sandbox.dispose();
    await redis.del(redisCanaryKey);
    redis.disconnect();
    await new Promise((resolve) => dashboard.close(resolve));
    await new Promise((resolve) => hostSocket.close(resolve));
    rmSync(base, { recursive: true, force: true });
    rmSync(path.dirname(hostTmpCanary), { recursive: true, force: true });
  });

  it('the canaries are reachable from the host (so every check below can fail)', async () => {
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe(SECRET);
    expect(await redis.ping()).toBe('PONG');
    const body = await (await fetch(`http://127.0.0.1:${dashboardPort}/`)).text();
    expect(body).toBe(SECRET);
    dashboardHits = 0;
    const unsandboxed = await openCommandSandbox({
      workspace,
      setup: { mode: 'off', reason: 'opted-out' },
    });
    let output = '';
    await unsandboxed.run(
      `cat ${path.join(outside, 'secret.txt')}; cat /proc/$PPID/environ; echo`,
      {
        onOutput: (chunk) => (output += chunk),
      },
    );
    await unsandboxed.dispose();
    expect(output).toContain(SECRET);
    expect(output).toContain(HOST_ENV_ENTRY);
    expect(HOST_ENV_ENTRY).not.toBe(`PATH=${SANDBOX_PATH}`);
  });

  describe('reading outside the workspace', () => {
    it('an absolute path', async () => {
      await attempt(`cat ${outside}/secret.txt`);
    });
    it('a quoted path', async () => {
      const [first, ...rest] = outside.split('/').filter(Boolean);
      await attempt(`cat /"${first}"/'${rest.join('/')}'/secr"et".txt`);
    });
    it('a path built at run time', async () => {
      await attempt(`p=$(printf '%s' "${outside.replaceAll('/', '\\/')}"); cat "$p/secret.txt"`);
    });
    it('python3 -c', async () => {
      await attempt(`python3 -c "print(open('${outside}/secret.txt').read())"`);
    });
    it('node -e', async () => {
      await attempt(
        `node -e "console.log(require('fs').readFileSync('${outside}/secret.txt','utf8'))"`,
      );
    });
    it("sh -c '...' path", async () => {
      await attempt(`sh -c 'cat "$1"' sh ${outside}/secret.txt`);
    });
    it('a symlink made with ln -s', async () => {
      await attempt(`ln -s ${outside}/secret.txt link.txt; cat link.txt; rm -f link.txt`);
    });
    it('a symlink to the parent directory', async () => {
      await attempt(`ln -s ../../.. up; cat up/outside/secret.txt; ls up; rm -f up`);
    });
    it('a hard link', async () => {
      const result = await attempt(
        `ln ${outside}/secret.txt hard.txt; cat hard.txt; rm -f hard.txt`,
      );
      expect(result.output).toMatch(/No such file|cross-device|Invalid cross-device/i);
    });
    it('a file in the host /tmp', async () => {
      await attempt(`cat ${hostTmpCanary}; ls /tmp`);
    });
    it('searching the whole filesystem', async () => {
      await attempt(
        `grep -rls -D skip --exclude-dir=usr --exclude-dir=proc --exclude-dir=dev "${SECRET}" / 2>/dev/null | head; find / \\( -path /proc -o -path /usr -o -path /dev \\) -prune -o -name secret.txt -print 2>/dev/null`,
      );
    });
    it('/etc/shadow and host configuration', async () => {
      const result = await attempt('cat /etc/shadow; ls /etc');
      expect(result.output).toMatch(/No such file/);
    });
  });

  describe('other projects, BATON_HOME and the memory store', () => {
    it('another workspace by relative path', async () => {
      await attempt('cat ../project-b/secret.txt; ls ..');
    });
    it('another workspace by absolute path', async () => {
      await attempt(`cat ${otherWorkspace}/secret.txt`);
    });
    it('BATON_HOME', async () => {
      await attempt(`cat ${home}/config.json; ls -la ${home}`);
    });
    it('the filesystem memory store', async () => {
      await attempt(`cat ${memoryStore}/progress.md`);
    });
    it('home directory tricks (~, $HOME/..)', async () => {
      await attempt('cat ~/../project-b/secret.txt; cat "$HOME/../../config.json"; ls /root');
    });
  });

  describe('the worker environment and /proc', () => {
    it('its own environment', async () => {
      await attempt('env; cat /proc/self/environ');
    });
    it('/proc of the parent', async () => {
      await attempt('cat /proc/$PPID/environ; cat /proc/$PPID/cmdline');
    });
    it('/proc of pid 1', async () => {
      const result = await attempt('cat /proc/1/environ | tr "\\0" "\\n"; ls /proc/1/root/');
      expect(result.output).not.toContain(os.hostname() === 'sandbox' ? '\0' : os.hostname());
    });
    it('every process in /proc', async () => {
      const result = await attempt(
        'for e in /proc/[0-9]*/environ; do cat "$e"; done 2>/dev/null | tr "\\0" "\\n"; ls /proc | grep -c "^[0-9]"',
      );
      const count = Number(result.output.trim().split('\n').pop());
      expect(count).toBeLessThan(10);
    });
    it('the worker process by its host pid', async () => {
      await attempt(`cat /proc/${process.pid}/environ; kill -0 ${process.pid} && echo visible`);
    });
  });

  describe('writing outside the workspace', () => {
    it('into a host directory', async () => {
      await attempt(`echo pwned > ${outside}/new.txt; echo pwned > ${outside}/secret.txt`);
    });
    it('into another workspace and the memory store', async () => {
      await attempt(
        `echo pwned > ../project-b/secret.txt; echo pwned > ${memoryStore}/progress.md; touch ${home}/x`,
      );
    });
    it('into system directories', async () => {
      const result = await attempt(
        'touch /usr/pwned; echo x > /etc/passwd; touch /pwned; echo done',
      );
      expect(result.output).toMatch(/Read-only file system|Permission denied/);
      expect(() => statSync('/usr/pwned')).toThrow();
    });
    it('through python', async () => {
      await attempt(`python3 -c "open('${outside}/py.txt','w').write('x')"`);
    });
  });

  describe('network', () => {
    it('Redis on loopback (bash /dev/tcp)', async () => {
      const result = await attempt(
        `exec 3<>/dev/tcp/127.0.0.1/6379 && printf 'SET ${redisCanaryKey} pwned\\r\\nPING\\r\\n' >&3 && timeout 2 cat <&3`,
      );
      expect(result.output).not.toContain('PONG');
    });
    it('Redis on loopback (python socket)', async () => {
      const result = await attempt(
        `python3 -c "
import socket
s = socket.create_connection(('127.0.0.1', 6379), timeout=2)
s.sendall(b'SET ${redisCanaryKey} pwned\\r\\nPING\\r\\n')
print(s.recv(100))"`,
      );
      expect(result.output).not.toContain('PONG');
    });
    it('the dashboard / metrics port on loopback', async () => {
      await attempt(
        `node -e "fetch('http://127.0.0.1:${dashboardPort}/').then(r=>r.text()).then(console.log,e=>console.log('failed',e.cause?.code))"`,
      );
    });
    it('the host through its own address', async () => {
      const addresses = Object.values(os.networkInterfaces())
        .flat()
        .filter((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)
        .map((entry) => entry!.address);
      for (const address of addresses.slice(0, 2)) {
        await attempt(`timeout 3 bash -c 'exec 3<>/dev/tcp/${address}/6379' && echo connected`);
      }
    });
    it('outbound network and DNS', async () => {
      const result = await attempt(
        `getent hosts registry.npmjs.org; node -e "fetch('https://registry.npmjs.org/').then(r=>console.log('status',r.status),e=>console.log('failed'))"; timeout 3 bash -c 'exec 3<>/dev/tcp/1.1.1.1/53' && echo connected`,
      );
      expect(result.output).not.toMatch(/status \d|connected/);
    });
    it('a Unix socket of the host', async () => {
      await attempt(`python3 -c "
import socket
s = socket.socket(socket.AF_UNIX)
s.connect('${hostSocketPath}')
print(s.recv(100))"; find / -type s 2>/dev/null`);
    });
  });

  describe('processes', () => {
    it('a background process does not outlive its command', async () => {
      const marker = `${40_000 + markerSeq++}.5`;
      await attempt(`(sleep ${marker}; echo late > late.txt) & echo started`);
      expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
    });
    it('setsid + nohup does not outlive its command', async () => {
      const marker = `${40_000 + markerSeq++}.5`;
      await attempt(`setsid nohup sleep ${marker} >/dev/null 2>&1 & disown; echo started`);
      expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
    });
    it('a process running at the timeout is killed with every child', async () => {
      const marker = `${40_000 + markerSeq++}.5`;
      const result = await attempt(`sleep ${marker} & sleep ${marker}`, 500);
      expect(result.stopped).toBe('timeout');
      expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
    });
    it('a fork bomb stays bounded by the process limit', async () => {
      const result = await attempt(
        `python3 -c "
import os, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
        n += 1
except OSError as error:
    print('bounded after', n, error.errno)"`,
        15_000,
      );
      const forked = Number(result.output.match(/bounded after (\d+)/)?.[1]);
      expect(forked).toBeLessThan(64);
    });
    it('memory exhaustion stays bounded by the memory limit', async () => {
      const result = await attempt(
        `python3 -c "
chunks = []
while True:
    chunks.append(bytearray(16 * 1024 * 1024))
    print(len(chunks) * 16, flush=True)"`,
        20_000,
      );
      const reached = Math.max(
        0,
        ...result.output.split('\n').filter(Boolean).map(Number).filter(Number.isFinite),
      );
      expect(reached).toBeLessThanOrEqual(256);
      expect(result.exitCode).not.toBe(0);
    });
  });

  describe('devices, mounts and privileges', () => {
    it('device files of the host', async () => {
      const result = await attempt(
        'ls /dev; cat /dev/sda /dev/mem /dev/kmsg 2>&1 | head -3; mknod x b 8 0',
      );
      expect(result.output).not.toMatch(/\bsda\b.*\n.*sda/);
      expect(result.output).toMatch(/No such file|Operation not permitted/);
    });
    it('mounting, chroot and nested user namespaces', async () => {
      const result = await attempt(
        `mount -t tmpfs none /tmp 2>&1; mount --bind / /tmp 2>&1; unshare -r cat ${outside}/secret.txt 2>&1; chroot / true 2>&1; ls /sys`,
      );
      expect(result.output).toMatch(/permission denied|Operation not permitted|No space left/i);
    });
  });

  it('the worker keeps running commands after every attempt', async () => {
    const result = await run('echo still here; pwd');
    expect(result.exitCode).toBe(0);
    expect(result.output).toBe(`still here\n${workspace}\n`);
    expect(execFileSync('cat', [path.join(outside, 'secret.txt')], { encoding: 'utf8' })).toBe(
      SECRET,
    );
  });

  it('a command still running when the session ends is killed with the session', async () => {
    const own = await openCommandSandbox({
      workspace,
      setup: { mode: 'bubblewrap', policy: parseSandboxPolicy({}) },
    });
    const marker = `${40_000 + markerSeq++}.5`;
    let output = '';
    const pending = own.run(`echo started; sleep ${marker}`, {
      onOutput: (chunk) => (output += chunk),
    });
    await waitFor('the command to start', () => output.includes('started'));
    expect(hostProcesses(`sleep ${marker}`)).not.toEqual([]);
    await own.dispose();
    const result = await pending;
    expect(result.stopped).toBe('aborted');
    expect(hostProcesses(`sleep ${marker}`)).toEqual([]);
  });
});
