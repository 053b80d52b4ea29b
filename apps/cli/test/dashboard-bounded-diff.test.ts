import { readFile, writeFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { startCli } from './helpers.js';
import { redisCliWorld } from './redis-fixtures.js';

const world = redisCliWorld();

/** 1 MiB of 64-byte lines, each naming `prefix` and its number: two prefixes differ on every line. */
function mebibyteOfLines(prefix: string): string {
  const lines: string[] = [];
  for (let index = 0; index < 16_384; index++)
    lines.push(`${prefix} line ${index} `.padEnd(63, '.') + '\n');
  return lines.join('');
}

async function statusKilobytes(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'mu').exec(status);
  if (match === null) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

describe('baton dashboard: memory diffs are bounded', () => {
  it('answers two 1 MiB versions that differ on every line as too large, in < 64 MB, while other requests are answered', async () => {
    const { redis } = world;
    const id = redis.projectId('diff');
    await redis.control.createProject({ id, goal: 'Big memory\n- one thing' });
    const store = await redis.control.memoryStore(id);
    const before = mebibyteOfLines('before');
    const after = mebibyteOfLines('after');
    expect(before.length).toBe(1_048_576);
    await store.write('notes.md', before, { mode: 'create', session: 's1' });
    await store.write('notes.md', after, { mode: 'overwrite', session: 's2' });

    const dashboard = startCli(['dashboard', '--port', '0', '--json'], {
      cwd: world.dir,
      env: redis.env(world.dir),
    });
    try {
      await dashboard.waitForOutput('"ready"');
      const url = (JSON.parse(dashboard.stdout().split('\n')[0] ?? '') as { url: string }).url;
      const history = (await (
        await fetch(`${url}/api/projects/${id}/memory/history?path=/memories/notes.md`)
      ).json()) as { versions: { version: string }[] };
      const [newest, oldest] = history.versions;
      expect(oldest).toBeDefined();

      // Peak RSS is reset (Linux clear_refs 5) so VmHWM then holds this request's peak alone.
      await writeFile(`/proc/${dashboard.pid}/clear_refs`, '5');
      const baseline = await statusKilobytes(dashboard.pid, 'VmRSS');
      const started = performance.now();
      let diffDone = false;
      const diff = fetch(
        `${url}/api/projects/${id}/memory/diff?path=/memories/notes.md&from=${oldest!.version}&to=${newest!.version}`,
      ).then(async (response) => {
        const body = (await response.json()) as { diff: Record<string, unknown> };
        diffDone = true;
        return { status: response.status, body, ms: performance.now() - started };
      });
      // Other requests keep arriving while the diff is served; each must be answered promptly.
      const latencies: number[] = [];
      while (!diffDone && performance.now() - started < 5_000) {
        const sent = performance.now();
        const response = await fetch(`${url}/api/session`);
        expect(response.status).toBe(200);
        await response.arrayBuffer();
        latencies.push(performance.now() - sent);
        await new Promise((resolve) => setImmediate(resolve));
      }
      const answer = await diff;
      const peakGrowthMb = ((await statusKilobytes(dashboard.pid, 'VmHWM')) - baseline) / 1024;

      expect(answer.status).toBe(200);
      // Whichever bound stops it first (1,000 changed lines or 50 ms), the page is told plainly.
      expect(answer.body.diff).toMatchObject({ tooLarge: true, lines: [] });
      expect(answer.body.diff.message).toMatch(/^Too large to show: /u);
      expect(peakGrowthMb).toBeLessThan(64);
      // Times depend on the machine's load, so they are printed, not asserted (the bound on work
      // above is what keeps them small; pitfalls: 2 shared cores).
      console.log(
        `diff ${answer.ms.toFixed(0)} ms, peak RSS +${peakGrowthMb.toFixed(1)} MB, ${latencies.length} concurrent requests, slowest ${Math.max(...latencies).toFixed(0)} ms`,
      );
    } finally {
      dashboard.kill('SIGTERM');
      await dashboard.done;
    }
  });
});
