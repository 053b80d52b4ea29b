import { describe, expect, it } from 'vitest';
import { loadWorkerConfig } from './config.js';
import { isWorkerError } from './errors.js';

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadWorkerConfig(env);
  } catch (error) {
    if (isWorkerError(error) && error.code === 'invalid_config') return error.message.split('\n');
    throw error;
  }
  return [];
}

describe('loadWorkerConfig', () => {
  it('has defaults tuned for resumption within 15 s', () => {
    const config = loadWorkerConfig({ ANTHROPIC_API_KEY: 'key' });
    expect(config).toMatchObject({
      redis: { kind: 'single', url: 'redis://127.0.0.1:6379' },
      prefix: '{baton}',
      simulator: false,
      model: 'claude-sonnet-4-6',
      concurrency: 4,
      lockDurationMs: 6000,
      stalledIntervalMs: 3000,
      maxStalledCount: 100,
      leaseTtlMs: 8000,
    });
    // Worst case: lock expiry plus two stall checks.
    expect(config.lockDurationMs + 2 * config.stalledIntervalMs).toBeLessThanOrEqual(15_000);
  });

  it('needs no key when the simulator is chosen', () => {
    expect(loadWorkerConfig({ BATON_MODEL: 'sim' })).toMatchObject({
      simulator: true,
      model: 'sim',
    });
    expect(loadWorkerConfig({ BATON_SIMULATOR: '1' }).simulator).toBe(true);
    // The simulator at Sonnet's prices is the simulator too; a real model without a key is not.
    expect(loadWorkerConfig({ BATON_MODEL: 'sim-sonnet' })).toMatchObject({
      simulator: true,
      model: 'sim-sonnet',
    });
    expect(() => loadWorkerConfig({ BATON_MODEL: 'claude-sonnet-4-6' })).toThrow(
      /ANTHROPIC_API_KEY is not set/,
    );
  });

  it('reports one line per problem, each naming the variable', () => {
    const lines = problems({
      REDIS_URL: 'http://localhost',
      BATON_CONCURRENCY: '0',
      BATON_PREFIX: 'no-tag',
      LOG_LEVEL: 'chatty',
    });
    expect(lines).toEqual([
      'REDIS_URL must start with redis:// or rediss://, got "http://localhost"',
      'BATON_PREFIX must contain one {hash tag} and no ":", got "no-tag"',
      'BATON_CONCURRENCY must be an integer from 1 to 1000, got "0"',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
      'ANTHROPIC_API_KEY is not set: set it, or choose the simulator with BATON_MODEL=sim',
    ]);
  });

  it('reads BATON_FALLBACK_MODEL and refuses one that is not a model id', () => {
    expect(loadWorkerConfig({ BATON_MODEL: 'sim' }).fallbackModel).toBeUndefined();
    expect(
      loadWorkerConfig({ BATON_MODEL: 'sim', BATON_FALLBACK_MODEL: ' claude-haiku-4-5 ' })
        .fallbackModel,
    ).toBe('claude-haiku-4-5');
    expect(problems({ BATON_MODEL: 'sim', BATON_FALLBACK_MODEL: 'claude haiku' })).toEqual([
      expect.stringMatching(/^BATON_FALLBACK_MODEL must be a model id/),
    ]);
  });

  it('rejects an unparseable REDIS_URL without echoing its password', () => {
    expect(problems({ BATON_MODEL: 'sim', REDIS_URL: 'redis://:x' })).toEqual([
      'REDIS_URL is not a URL: "redis://:x"',
    ]);
    expect(problems({ BATON_MODEL: 'sim', REDIS_URL: 'redis://user:hunter2@' })).toEqual([
      'REDIS_URL is not a URL: "redis://user:***@"',
    ]);
  });

  it('REDIS_CLUSTER_NODES names a Cluster and takes precedence over REDIS_URL', () => {
    const config = loadWorkerConfig({
      BATON_MODEL: 'sim',
      REDIS_URL: 'redis://single:6379',
      REDIS_CLUSTER_NODES: 'rediss://baton:pw@10.0.0.1:7000,10.0.0.2:7001',
    });
    expect(config.redis).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'baton',
      password: 'pw',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
    });
    expect(
      problems({ BATON_MODEL: 'sim', REDIS_CLUSTER_NODES: '10.0.0.1:7000,redis://h:0' }),
    ).toEqual([
      'REDIS_CLUSTER_NODES entries must be host:port or redis[s]://[user:password@]host:port, got "redis://h:0"',
    ]);
  });

  it('reads webhook receivers and needs a secret with them', () => {
    const config = loadWorkerConfig({
      BATON_MODEL: 'sim',
      BATON_WEBHOOK_URL: 'https://a.example/hook, http://127.0.0.1:9/x',
      BATON_WEBHOOK_SECRET: 's3',
      BATON_WEBHOOK_ATTEMPTS: '2',
    });
    expect(config).toMatchObject({
      webhookUrls: ['https://a.example/hook', 'http://127.0.0.1:9/x'],
      webhookSecret: 's3',
      webhookAttempts: 2,
      webhookBackoffMs: 5000,
    });
    expect(loadWorkerConfig({ BATON_MODEL: 'sim' }).webhookUrls).toEqual([]);
    expect(problems({ BATON_MODEL: 'sim', BATON_WEBHOOK_URL: 'https://a.example/hook' })).toEqual([
      'BATON_WEBHOOK_SECRET is not set: webhooks are signed, so BATON_WEBHOOK_URL needs a secret',
    ]);
  });

  it('a whsec_ webhook secret must be Standard Webhooks base64 of 24 to 64 bytes', () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect(
      loadWorkerConfig({ BATON_MODEL: 'sim', BATON_WEBHOOK_SECRET: secret }).webhookSecret,
    ).toBe(secret);
    expect(problems({ BATON_MODEL: 'sim', BATON_WEBHOOK_SECRET: 'whsec_c2hvcnQ=' })).toEqual([
      `BATON_WEBHOOK_SECRET: the webhook secret's key is 5 bytes; Standard Webhooks asks for 24 to 64 (make one with: echo "whsec_$(openssl rand -base64 32)")`,
    ]);
  });
});
