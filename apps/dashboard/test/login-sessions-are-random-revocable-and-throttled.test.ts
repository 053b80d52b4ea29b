/**
 * Real sessions: every login gets its own random id kept in Redis; the cookie says nothing about
 * the token; the server checks the expiry itself; logout revokes the session (a copied cookie
 * stops working); failed token attempts from one address back off and are logged at warn; a weak
 * token stops the server from starting and the error suggests a strong one.
 */
import { createHash, createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { createBatonControl } from '@baton/projects';
import { REDIS_URL, deletePrefix, randomHex } from '@baton/test-support';
import { createDashboardServer } from '../src/index.js';
import { tokenWeakness } from '../src/internal/auth.js';
import { createLoginThrottle } from '../src/internal/login-throttle.js';
import { startTestDashboard, type TestDashboard } from './support/dashboard.js';

const TOKEN = 'correct-horse-battery-staple-42';

let dashboard: TestDashboard | undefined;
afterEach(async () => {
  await dashboard?.close();
  dashboard = undefined;
});

function capture(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

async function login(url: string, token: string): Promise<Response> {
  return fetch(`${url}/login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ token }).toString(),
  });
}

function sessionCookie(response: Response): string {
  return (response.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
}

describe('login sessions', () => {
  it('issues a different random session per login, none derived from the token', async () => {
    dashboard = await startTestDashboard({ token: TOKEN });
    const url = dashboard.server.url;
    const first = sessionCookie(await login(url, TOKEN));
    const second = sessionCookie(await login(url, TOKEN));
    expect(first).toMatch(/^baton_dashboard=[A-Za-z0-9_-]{43}$/);
    expect(second).not.toBe(first);
    const value = first.split('=')[1] ?? '';
    // Not the token, nor the old constant HMAC of it, nor any hash of it.
    expect(value).not.toContain(TOKEN);
    expect(value).not.toBe(
      createHmac('sha256', TOKEN).update('baton-dashboard-session-v1').digest('base64url'),
    );
    expect(value).not.toBe(createHash('sha256').update(TOKEN).digest('base64url'));
    for (const cookie of [first, second]) {
      expect((await fetch(`${url}/api/projects`, { headers: { cookie } })).status).toBe(200);
    }
    // Redis holds a hash of the id, not the id.
    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`${dashboard.prefix}:dashboard:session:*`);
      expect(keys).toHaveLength(2);
      expect(keys.join(' ')).not.toContain(value);
    } finally {
      redis.disconnect();
    }
  });

  it('revokes the session at logout: a copy of the cookie no longer works', async () => {
    dashboard = await startTestDashboard({ token: TOKEN });
    const url = dashboard.server.url;
    const cookie = sessionCookie(await login(url, TOKEN));
    const other = sessionCookie(await login(url, TOKEN));
    const logout = await fetch(`${url}/logout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, origin: url },
    });
    expect(logout.status).toBe(303);
    expect((await fetch(`${url}/api/projects`, { headers: { cookie } })).status).toBe(401);
    // Another login's session is its own.
    expect((await fetch(`${url}/api/projects`, { headers: { cookie: other } })).status).toBe(200);
  });

  it('checks the expiry on the server, whatever the cookie or the key TTL say', async () => {
    dashboard = await startTestDashboard({ token: TOKEN });
    const url = dashboard.server.url;
    const cookie = sessionCookie(await login(url, TOKEN));
    const redis = new Redis(REDIS_URL);
    try {
      const [key] = await redis.keys(`${dashboard.prefix}:dashboard:session:*`);
      const stored = JSON.parse((await redis.get(key!)) ?? '{}') as { expiresAt: number };
      expect(stored.expiresAt).toBeGreaterThan(Date.now() + 11 * 3_600_000);
      // The key lives on (a TTL is only clean-up); the recorded expiry has passed.
      await redis.set(key!, JSON.stringify({ ...stored, expiresAt: Date.now() - 1 }), 'KEEPTTL');
    } finally {
      redis.disconnect();
    }
    expect((await fetch(`${url}/api/projects`, { headers: { cookie } })).status).toBe(401);
  });

  it('throttles failed attempts per address with backoff and logs them at warn', async () => {
    const { logger, lines } = capture();
    dashboard = await startTestDashboard({ token: TOKEN, logger });
    const url = dashboard.server.url;
    const bearer = (token: string) =>
      fetch(`${url}/api/projects`, { headers: { authorization: `Bearer ${token}` } });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 6; attempt++)
      statuses.push((await bearer(`guess-${attempt}-xxxxxxxxxxxx`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    // Locked out now: even the right token is not looked at, by bearer or by the form.
    const locked = await bearer(TOKEN);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await login(url, TOKEN)).status).toBe(429);
    const warnings = lines.filter((line) => line.msg === 'dashboard authentication failed');
    expect(warnings).toHaveLength(6);
    expect(warnings.every((line) => line.level === 40 && line.address === '127.0.0.1')).toBe(true);
    expect(JSON.stringify(lines)).not.toContain('guess-');
  });

  it('keeps the lockout in Redis: a second dashboard replica on the same Redis refuses the locked-out address', async () => {
    dashboard = await startTestDashboard({ token: TOKEN });
    const redis = new Redis(REDIS_URL);
    const replica = await createDashboardServer({
      control: dashboard.control,
      redis,
      port: 0,
      token: TOKEN,
      logger: pino({ level: 'silent' }),
      onError: () => undefined,
    });
    try {
      const bearer = (url: string, token: string) =>
        fetch(`${url}/api/projects`, { headers: { authorization: `Bearer ${token}` } });
      for (let attempt = 0; attempt < 6; attempt++)
        expect((await bearer(dashboard.server.url, `guess-${attempt}-xxxxxxxxxxxx`)).status).toBe(
          401,
        );
      // The replica never saw a failure itself, and still refuses without looking at the token.
      const locked = await bearer(replica.url, TOKEN);
      expect(locked.status).toBe(429);
      expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(
        await redis.pttl(`${dashboard.prefix}:dashboard:login-lock:127.0.0.1`),
      ).toBeGreaterThan(0);
    } finally {
      await replica.close();
      redis.disconnect();
    }
  });

  it('backs off 1 s, 2 s, 4 s ... after five free failures, up to the cap; a success starts afresh', async () => {
    const redis = new Redis(REDIS_URL);
    const prefix = `{bd-throttle-${randomHex()}}`;
    try {
      const throttle = createLoginThrottle({
        redis,
        prefix,
        baseDelayMs: 1_000,
        maxDelayMs: 8_000,
      });
      const locks: number[] = [];
      for (let attempt = 0; attempt < 9; attempt++)
        locks.push((await throttle.fail('10.0.0.1')).lockedForMs);
      expect(locks).toEqual([0, 0, 0, 0, 0, 1_000, 2_000, 4_000, 8_000]);
      expect(await throttle.retryAfterMs('10.0.0.1')).toBeGreaterThan(7_000);
      expect(await throttle.retryAfterMs('10.0.0.2')).toBe(0);
      // Forgotten after forgetAfterMs: the failure count carries a TTL.
      expect(await redis.pttl(`${prefix}:dashboard:login-failures:10.0.0.1`)).toBeGreaterThan(0);
      await throttle.succeed('10.0.0.1');
      expect(await throttle.retryAfterMs('10.0.0.1')).toBe(0);
      expect((await throttle.fail('10.0.0.1')).lockedForMs).toBe(0);
    } finally {
      await deletePrefix(prefix);
      redis.disconnect();
    }
  });

  it('refuses a weak token at start and suggests a generated one', async () => {
    const control = createBatonControl({ url: REDIS_URL, prefix: `{bd-weak-${randomHex()}}` });
    const redis = new Redis(REDIS_URL);
    try {
      for (const weak of ['aaaaaaaaaaaaaaaa', 'abcdefghijklmnopq', '1234567890123456']) {
        const attempt = createDashboardServer({
          control,
          redis,
          host: '0.0.0.0',
          port: 0,
          token: weak,
        });
        await expect(attempt).rejects.toMatchObject({ code: 'invalid_config' });
        const message = await attempt.then(
          () => '',
          (error: Error) => error.message,
        );
        expect(message).toMatch(/BATON_DASHBOARD_TOKEN is too weak/);
        const suggested = /such as (\S+)$/.exec(message)?.[1] ?? '';
        expect(suggested).toHaveLength(32);
        expect(tokenWeakness(suggested)).toBeNull();
      }
    } finally {
      redis.disconnect();
      await control.close();
    }
  });
});
