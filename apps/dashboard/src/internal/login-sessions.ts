/**
 * Login sessions kept server-side in Redis. Each login gets a fresh random id (32 bytes); the
 * cookie carries only that id, so it says nothing about the token and cannot be used to test
 * token guesses offline. Redis holds a SHA-256 of the id (someone reading Redis cannot replay a
 * session) with the expiry the server checks itself; the key's TTL only cleans up. Logout
 * deletes the key, so a copied cookie stops working at once.
 *
 * Key: `<prefix>:dashboard:session:<sha256(id) hex>` (a string holding `{ createdAt, expiresAt }`),
 * under the deployment's `{hash tag}` prefix like every other Baton key.
 */
import { createHash, randomBytes } from 'node:crypto';

/** The part of an ioredis client (single node or Cluster) the session store uses. */
export interface SessionRedis {
  set(key: string, value: string, mode: 'PX', milliseconds: number): Promise<unknown>;
  get(key: string): Promise<string | null>;
  del(key: string): Promise<number>;
}

export interface LoginSessionsOptions {
  redis: SessionRedis;
  /** The deployment's key prefix (`control.keys.prefix`, e.g. `{baton}`). */
  prefix: string;
  /** How long a session lasts from login (ms). */
  lifetimeMs: number;
  /** Clock, for tests of expiry. Default `Date.now`. */
  now?: (() => number) | undefined;
}

export interface LoginSessions {
  /** Starts a session; resolves to the id the cookie carries. */
  create(): Promise<string>;
  /** Whether `id` names a live session (unknown, malformed and expired ids: false). */
  check(id: string): Promise<boolean>;
  /** Ends the session `id` (logout). Unknown ids are ignored. */
  revoke(id: string): Promise<void>;
}

/** base64url of 32 random bytes. */
const SESSION_ID_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function createLoginSessions(options: LoginSessionsOptions): LoginSessions {
  const now = options.now ?? Date.now;
  const key = (id: string) =>
    `${options.prefix}:dashboard:session:${createHash('sha256').update(id).digest('hex')}`;
  return {
    async create() {
      const id = randomBytes(32).toString('base64url');
      const createdAt = now();
      const expiresAt = createdAt + options.lifetimeMs;
      await options.redis.set(
        key(id),
        JSON.stringify({ createdAt, expiresAt }),
        'PX',
        options.lifetimeMs,
      );
      return id;
    },
    async check(id) {
      if (!SESSION_ID_PATTERN.test(id)) return false;
      const stored = await options.redis.get(key(id));
      if (stored === null) return false;
      try {
        const { expiresAt } = JSON.parse(stored) as { expiresAt?: unknown };
        return typeof expiresAt === 'number' && now() < expiresAt;
      } catch {
        return false;
      }
    },
    async revoke(id) {
      if (!SESSION_ID_PATTERN.test(id)) return;
      await options.redis.del(key(id));
    },
  };
}
