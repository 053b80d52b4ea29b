import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from './server.js';

describe('isLoopbackHost decides which binds need a token', () => {
  it('treats 127.0.0.0/8, localhost and ::1 as loopback', () => {
    for (const host of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]']) {
      expect(isLoopbackHost(host), host).toBe(true);
    }
  });

  it('treats every other address as reachable from elsewhere', () => {
    for (const host of [
      '0.0.0.0',
      '::',
      '192.168.1.10',
      '10.0.0.1',
      'example.com',
      '127.0.0.1.nip.io',
    ]) {
      expect(isLoopbackHost(host), host).toBe(false);
    }
  });
});
