import { describe, expect, it } from 'vitest';
import {
  RedisTargetError,
  describeRedisTarget,
  readRedisTarget,
  redisTargetEnvironment,
} from './redis-connection.js';

describe('readRedisTarget', () => {
  it('defaults to the local Redis', () => {
    expect(readRedisTarget({})).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379' });
  });

  it('uses REDIS_URL as given', () => {
    expect(readRedisTarget({ REDIS_URL: ' rediss://:pw@cache:6380/2 ' })).toEqual({
      kind: 'single',
      url: 'rediss://:pw@cache:6380/2',
    });
  });

  it('REDIS_CLUSTER_NODES takes precedence over REDIS_URL', () => {
    expect(
      readRedisTarget({ REDIS_URL: 'redis://single:6379', REDIS_CLUSTER_NODES: 'a:7000, b:7001' }),
    ).toEqual({
      kind: 'cluster',
      tls: false,
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
      ],
    });
  });

  it('takes TLS and credentials from URL-form seeds', () => {
    const target = readRedisTarget({
      REDIS_CLUSTER_NODES: 'rediss://baton:p%40ss@a:7000,rediss://[::1]:7001',
    });
    expect(target).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'baton',
      password: 'p@ss',
      nodes: [
        { host: 'a', port: 7000 },
        { host: '::1', port: 7001 },
      ],
    });
    // The environment handed to a child names the same cluster, and no log line shows the password.
    expect(readRedisTarget(redisTargetEnvironment(target))).toEqual(target);
    expect(describeRedisTarget(target)).toBe('rediss cluster a:7000,::1:7001');
  });

  it('bare host:port seeds take the scheme and credentials of the URL seeds', () => {
    expect(
      readRedisTarget({ REDIS_CLUSTER_NODES: 'rediss://:pw@a:7000,b:7001,rediss://c:7002/0' }),
    ).toEqual({
      kind: 'cluster',
      tls: true,
      password: 'pw',
      nodes: [
        { host: 'a', port: 7000 },
        { host: 'b', port: 7001 },
        { host: 'c', port: 7002 },
      ],
    });
  });

  it.each([
    ['REDIS_CLUSTER_NODES', 'redis://a:7000,rediss://b:7001', /mixes redis:\/\/ and rediss:\/\//],
    ['REDIS_CLUSTER_NODES', 'rediss://:secret@a:7000/2', /cannot select a database/],
    ['REDIS_CLUSTER_NODES', 'user:secret@a:7000', /must be host:port or redis\[s\]:\/\//],
    ['REDIS_CLUSTER_NODES', 'redis://:x@a:1,redis://:y@b:2', /different credentials/],
    ['REDIS_CLUSTER_NODES', 'a:99999', /must be host:port/],
    ['REDIS_CLUSTER_NODES', ' , ', /lists no nodes/],
    ['REDIS_CLUSTER_NODES', 'http://a:1', /must start with redis:\/\/ or rediss:\/\//],
    ['REDIS_URL', 'localhost:6379', /REDIS_URL must start with redis:\/\/ or rediss:\/\//],
    ['REDIS_URL', 'redis://:secret@', /not a URL|no host/],
  ])('%s=%s is refused with one line naming the variable', (variable, value, message) => {
    let caught: unknown;
    try {
      readRedisTarget({ [variable]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RedisTargetError);
    expect((caught as RedisTargetError).variable).toBe(variable);
    expect((caught as Error).message).toMatch(message);
    expect((caught as Error).message).not.toContain('secret');
  });
});
