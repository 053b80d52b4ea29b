/** The Redis the tests use: `REDIS_URL` from the environment, else the local default. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
