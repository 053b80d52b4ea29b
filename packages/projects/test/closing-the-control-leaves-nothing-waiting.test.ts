/**
 * The control's `close()` leaves nothing waiting when its follow and wait connections never
 * reached Redis: each is closed with `closeRedisConnection` (destroyed), not `disconnect()`, which
 * keeps a process alive 2 s for a socket that closed already. Runs in a child process, which must
 * exit on its own well before those 2 s.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REDIS_URL } from '@baton/test-support';
import { randomPrefix } from './support/redis.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));

describe("the control's close()", () => {
  it('returns, and lets the process exit, at once when its followers never reached Redis', async () => {
    const redis = new URL(REDIS_URL);
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--conditions=@baton/source',
        '--import',
        'tsx',
        '--input-type=module',
        '-e',
        `import net from 'node:net';
         import { writeSync } from 'node:fs';
         import { createBatonControl } from './src/index.ts';
         // The control's own connection reaches Redis through this proxy; every later one (the
         // follow and wait connections) is refused at once, so it never becomes ready.
         let attempts = 0;
         let refusedTwice;
         const twice = new Promise((resolve) => (refusedTwice = resolve));
         const proxy = net.createServer((socket) => {
           attempts += 1;
           if (attempts > 1) {
             socket.destroy();
             if (attempts === 3) refusedTwice();
             return;
           }
           const upstream = net.connect(${Number(redis.port || 6379)}, '${redis.hostname}');
           upstream.on('error', () => socket.destroy());
           socket.on('error', () => upstream.destroy());
           socket.pipe(upstream).pipe(socket);
         });
         proxy.listen(0, '127.0.0.1');
         await new Promise((resolve) => proxy.once('listening', resolve));
         proxy.unref();
         const control = createBatonControl({
           url: 'redis://127.0.0.1:' + proxy.address().port,
           prefix: '${randomPrefix()}',
         });
         const follow = control.followEvents('p-close', { blockMs: 60000 })[Symbol.asyncIterator]();
         void follow.next().catch(() => undefined);
         void control.waitForEvents({ 'p-close': '0-0' }, { blockMs: 60000 }).catch(() => undefined);
         await twice;
         const closing = performance.now();
         await control.close();
         const closeMs = performance.now() - closing;
         proxy.close();
         process.on('exit', () => {
           const exitMs = performance.now() - closing;
           writeSync(1, JSON.stringify({ attempts, closeMs, exitMs }));
         });`,
      ],
      { cwd: packageDir, timeout: 30_000 },
    );
    const result = JSON.parse(stdout) as { attempts: number; closeMs: number; exitMs: number };
    // ioredis's wait for a closed socket is 2 s: well under it, nothing waited for it.
    expect(result.closeMs).toBeLessThan(1000);
    expect(result.exitMs).toBeLessThan(1000);
    // The control's own connection, then the follow and the wait connections, refused.
    expect(result.attempts).toBeGreaterThanOrEqual(3);
  });
});
