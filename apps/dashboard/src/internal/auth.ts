/**
 * Who may use the dashboard, and which requests may change things.
 *
 * - Without a token (only allowed on loopback) every request from the machine is trusted, but the
 *   Host header must name the loopback address we are bound to: a DNS-rebinding page served
 *   from `evil.example` that resolves to 127.0.0.1 arrives with `Host: evil.example` and is refused.
 * - With a token, a request needs `Authorization: Bearer <token>` or the session cookie set by the
 *   login form. The cookie holds an HMAC of the token, not the token, and is HttpOnly and
 *   SameSite=Strict. Comparisons are constant-time over fixed-length digests.
 * - Every request that changes state must be a POST whose `Origin` (or, failing that,
 *   `Sec-Fetch-Site`) says it came from our own pages. Bearer requests without either header are
 *   allowed: browsers never attach a bearer token on their own, so they cannot be forged cross-site.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Context } from 'hono';
import { getCookie } from 'hono/cookie';

export const SESSION_COOKIE = 'baton_dashboard';

/** Session cookie lifetime: 12 hours. */
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

export type AuthResult =
  | { ok: true; via: 'none' | 'bearer' | 'cookie' }
  | { ok: false; status: 401 | 403 | 421; message: string };

export interface AuthPolicyOptions {
  /** The shared secret, or undefined when the dashboard runs open on loopback. */
  token: string | undefined;
  /** Host names (without port) a request may address when no token is set. */
  loopbackHosts: readonly string[];
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}

/** Constant-time string equality: both sides are hashed to 32 bytes first. */
export function constantTimeEqual(left: string, right: string): boolean {
  return timingSafeEqual(digest(left), digest(right));
}

/** The cookie value for a token: an HMAC, so the token itself never sits in the browser. */
export function sessionCookieValue(token: string): string {
  return createHmac('sha256', token).update('baton-dashboard-session-v1').digest('base64url');
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
  authenticate(context: Context): AuthResult;
  /** Is this state-changing request from our own origin (or a bearer client)? */
  checkSameOrigin(context: Context, via: 'none' | 'bearer' | 'cookie'): AuthResult;
  /** Does `candidate` match the configured token? */
  tokenMatches(candidate: string): boolean;
  /** Whether a token is configured at all. */
  readonly required: boolean;
}

export function createAuthPolicy(options: AuthPolicyOptions): AuthPolicy {
  const { token } = options;
  const loopbackHosts = new Set(options.loopbackHosts.map((host) => host.toLowerCase()));
  const expectedCookie = token === undefined ? undefined : sessionCookieValue(token);

  function tokenMatches(candidate: string): boolean {
    return token !== undefined && constantTimeEqual(candidate, token);
  }

  return {
    required: token !== undefined,
    tokenMatches,
    authenticate(context) {
      if (token === undefined || expectedCookie === undefined) {
        const host = hostName(context.req.header('host') ?? '').toLowerCase();
        if (!loopbackHosts.has(host)) {
          return {
            ok: false,
            status: 421,
            message: `Host "${host}" is not this dashboard's loopback address.`,
          };
        }
        return { ok: true, via: 'none' };
      }
      const authorization = context.req.header('authorization');
      if (authorization !== undefined) {
        const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
        if (match?.[1] !== undefined && tokenMatches(match[1])) return { ok: true, via: 'bearer' };
        return { ok: false, status: 401, message: 'Invalid bearer token.' };
      }
      const cookie = getCookie(context, SESSION_COOKIE);
      if (cookie !== undefined && constantTimeEqual(cookie, expectedCookie)) {
        return { ok: true, via: 'cookie' };
      }
      return { ok: false, status: 401, message: 'Authentication required.' };
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
        return { ok: false, status: 403, message: `Cross-origin request from ${origin} refused.` };
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
