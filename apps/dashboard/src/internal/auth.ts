/**
 * Who may use the dashboard, and which requests may change things.
 *
 * - Without a token (only allowed on loopback) every request from the machine is trusted, but the
 *   Host header must name the loopback address we are bound to: a DNS-rebinding page served
 *   from `evil.example` that resolves to 127.0.0.1 arrives with `Host: evil.example` and is refused.
 * - With a token, a request needs `Authorization: Bearer <token>` or the session cookie set by the
 *   login form. The cookie holds a random session id kept in Redis (login-sessions.ts), never
 *   anything derived from the token, and is HttpOnly and SameSite=Strict. Token comparisons are
 *   constant-time over fixed-length digests; failed attempts are throttled per address
 *   (login-throttle.ts, in Redis so every replica sees one lockout) and logged at `warn`.
 * - A token must be strong (`tokenWeakness`): the server refuses to start with a weak one.
 * - Every request that changes state must be a POST whose `Origin` (or, failing that,
 *   `Sec-Fetch-Site`) says it came from our own pages. Bearer requests without either header are
 *   allowed: browsers never attach a bearer token on their own, so they cannot be forged cross-site.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';
import type { Logger } from 'pino';
import type { LoginSessions } from './login-sessions.js';
import type { LoginThrottle } from './login-throttle.js';

export const SESSION_COOKIE = 'baton_dashboard';

/** Session cookie lifetime: 12 hours. */
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

type AuthResult =
  | { ok: true; via: 'none' | 'bearer' | 'cookie' }
  | { ok: false; status: 401 | 403 | 421; message: string }
  | { ok: false; status: 429; message: string; retryAfterSeconds: number };

export interface AuthPolicyOptions {
  /** The shared secret, or undefined when the dashboard runs open on loopback. */
  token: string | undefined;
  /** Host names (without port) a request may address when no token is set. */
  loopbackHosts: readonly string[];
  /** Where login sessions live (needed when a token is set). */
  sessions: LoginSessions | undefined;
  /** Backoff for failed token attempts, per client address (in Redis: shared by replicas). */
  throttle: LoginThrottle | undefined;
  /** Failed attempts are logged here at `warn`. */
  logger: Logger;
}

/** Shortest token accepted. */
export const MIN_TOKEN_LENGTH = 16;

/** A fresh token to suggest: 24 random bytes, base64url (32 characters, 192 bits). */
export function generateToken(): string {
  return randomBytes(24).toString('base64url');
}

/**
 * Why `token` is too weak to protect a dashboard, or null. Refused: fewer than
 * `MIN_TOKEN_LENGTH` characters, fewer than 8 distinct characters (`aaaaaaaaaaaaaaaa`,
 * `abababab...`), or a run where most neighbouring characters repeat or count up or down
 * (`abcdefghijklmnop`, `1234567890123456`). A random token of the suggested shape always passes.
 */
export function tokenWeakness(token: string): string | null {
  const characters = [...token];
  if (characters.length < MIN_TOKEN_LENGTH) return `shorter than ${MIN_TOKEN_LENGTH} characters`;
  if (new Set(characters).size < 8) return 'fewer than 8 different characters';
  let sequential = 0;
  for (let index = 1; index < characters.length; index++) {
    const step =
      (characters[index]?.codePointAt(0) ?? 0) - (characters[index - 1]?.codePointAt(0) ?? 0);
    if (Math.abs(step) <= 1) sequential++;
  }
  if (sequential * 2 >= characters.length - 1) return 'mostly repeated or consecutive characters';
  return null;
}

/** The client's address as the socket has it (`unknown` outside a real server, as in app.request). */
export function clientAddress(context: Context): string {
  try {
    return getConnInfo(context).remote.address ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time string equality: both sides are hashed to 32 bytes first. */
export function constantTimeEqual(left: string, right: string): boolean {
  return timingSafeEqual(digest(left), digest(right));
}

function hostName(hostHeader: string): string {
  // `[::1]:8080` -> `[::1]`, `127.0.0.1:8080` -> `127.0.0.1`.
  if (hostHeader.startsWith('[')) {
    const end = hostHeader.indexOf(']');
    return end === -1 ? hostHeader : hostHeader.slice(0, end + 1);
  }
  const colon = hostHeader.lastIndexOf(':');
  return colon === -1 ? hostHeader : hostHeader.slice(0, colon);
}

export interface AuthPolicy {
  /** Is this request allowed to read? */
  authenticate(context: Context): Promise<AuthResult>;
  /** Is this state-changing request from our own origin (or a bearer client)? */
  checkSameOrigin(context: Context, via: 'none' | 'bearer' | 'cookie'): AuthResult;
  /**
   * The login form's check: a new session id when `candidate` is the token, else the refusal
   * (401, or 429 while the address is locked out). Throttled and logged like bearer attempts.
   */
  login(
    context: Context,
    candidate: unknown,
  ): Promise<{ ok: true; sessionId: string } | Extract<AuthResult, { ok: false }>>;
  /** Ends the request's login session, if it has one. */
  logout(context: Context): Promise<void>;
  /** Whether a token is configured at all. */
  readonly required: boolean;
}

export function createAuthPolicy(options: AuthPolicyOptions): AuthPolicy {
  const { token, sessions, throttle, logger } = options;
  const loopbackHosts = new Set(options.loopbackHosts.map((host) => host.toLowerCase()));

  /** Checks `candidate` against the token under the per-address throttle. */
  async function attempt(
    context: Context,
    candidate: unknown,
    via: 'bearer' | 'login',
  ): Promise<true | Extract<AuthResult, { ok: false }>> {
    const address = clientAddress(context);
    const waitMs = (await throttle?.retryAfterMs(address)) ?? 0;
    if (waitMs > 0) {
      return {
        ok: false,
        status: 429,
        message: 'Too many failed attempts; try again later.',
        retryAfterSeconds: Math.ceil(waitMs / 1000),
      };
    }
    if (
      token !== undefined &&
      typeof candidate === 'string' &&
      candidate.length <= 1_024 &&
      constantTimeEqual(candidate, token)
    ) {
      await throttle?.succeed(address);
      return true;
    }
    const { failures, lockedForMs } = (await throttle?.fail(address)) ?? {
      failures: 1,
      lockedForMs: 0,
    };
    logger.warn({ address, via, failures, lockedForMs }, 'dashboard authentication failed');
    return {
      ok: false,
      status: 401,
      message: via === 'bearer' ? 'Invalid bearer token.' : 'That token is not correct.',
    };
  }

  return {
    required: token !== undefined,
    async authenticate(context) {
      if (token === undefined || sessions === undefined) {
        const host = hostName(context.req.header('host') ?? '').toLowerCase();
        if (!loopbackHosts.has(host)) {
          return {
            ok: false,
            status: 421,
            message: "That Host is not this dashboard's loopback address.",
          };
        }
        return { ok: true, via: 'none' };
      }
      const authorization = context.req.header('authorization');
      if (authorization !== undefined) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
        const checked = await attempt(context, match?.[1], 'bearer');
        return checked === true ? { ok: true, via: 'bearer' } : checked;
      }
      const cookie = getCookie(context, SESSION_COOKIE);
      if (cookie !== undefined && (await sessions.check(cookie)))
        return { ok: true, via: 'cookie' };
      return { ok: false, status: 401, message: 'Authentication required.' };
    },
    async login(context, candidate) {
      if (sessions === undefined) return { ok: false, status: 401, message: 'No token is set.' };
      const checked = await attempt(context, candidate, 'login');
      if (checked !== true) return checked;
      return { ok: true, sessionId: await sessions.create() };
    },
    async logout(context) {
      const cookie = getCookie(context, SESSION_COOKIE);
      if (cookie !== undefined && sessions !== undefined) await sessions.revoke(cookie);
    },
    checkSameOrigin(context, via) {
      const origin = context.req.header('origin');
      const fetchSite = context.req.header('sec-fetch-site');
      // Compare hosts, not full origins: behind a TLS-terminating proxy the scheme differs.
      const ownHost = (context.req.header('host') ?? '').toLowerCase();
      if (origin !== undefined) {
        let originHost: string | null;
        try {
          originHost = origin === 'null' ? null : new URL(origin).host.toLowerCase();
        } catch {
          originHost = null;
        }
        if (originHost !== null && originHost === ownHost) return { ok: true, via };
        return { ok: false, status: 403, message: 'Cross-origin request refused.' };
      }
      if (fetchSite !== undefined) {
        if (fetchSite === 'same-origin' || fetchSite === 'none') return { ok: true, via };
        return { ok: false, status: 403, message: 'Cross-site request refused.' };
      }
      if (via === 'bearer') return { ok: true, via };
      return {
        ok: false,
        status: 403,
        message: 'State-changing requests need an Origin header from this dashboard.',
      };
    },
  };
}
