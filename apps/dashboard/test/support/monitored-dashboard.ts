import {
  openCommandMonitor,
  REDIS_URL,
  type CommandMonitor,
  type SentCommand,
} from '@baton/test-support';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { startTestDashboard, type TestDashboard } from './dashboard.js';

export interface MonitoredDashboard {
  /** MONITOR on the shared Redis, open for the whole file. */
  monitor: CommandMonitor;
  /** A fresh dashboard (own prefix) for each test. */
  dashboard: TestDashboard;
  /** A plain connection for seeding what no API writes. */
  redis: Redis;
}

/**
 * Registers the hooks of a cost test (MONITOR pins the commands an operation sends) and returns
 * their context; read its fields inside tests, once the hooks have run.
 */
export function useMonitoredDashboard(): MonitoredDashboard {
  const context = {} as MonitoredDashboard;
  beforeAll(async () => {
    context.monitor = await openCommandMonitor();
    context.redis = new Redis(REDIS_URL);
  });
  afterAll(() => {
    context.monitor.close();
    context.redis.disconnect();
  });
  beforeEach(async () => {
    context.dashboard = await startTestDashboard();
  });
  afterEach(async () => {
    await context.dashboard.close();
  });
  return context;
}

/** The commands that name `key` among their arguments. */
export function commandsOn(sent: SentCommand[], key: string): SentCommand[] {
  return sent.filter((entry) => entry.args.includes(key));
}
