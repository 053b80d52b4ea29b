import { Redis } from 'ioredis';
import { REDIS_URL } from './redis-url.js';

/** One command Redis ran, as MONITOR reports it (`source` is `'lua'` for commands of a script). */
export interface SentCommand {
  command: string;
  args: string[];
  source: string;
}

/**
 * A MONITOR connection that can attribute commands to the code that sent them: tests of a hot
 * path's cost assert the exact commands it sent (MONITOR shows every client's, so each window is
 * filtered to keys under the test's own prefix).
 */
export interface CommandMonitor {
  /** Runs `action` and returns every command Redis ran meanwhile that mentions a key under `base`. */
  commandsSentBy(base: string, action: () => Promise<unknown>): Promise<SentCommand[]>;
  close(): void;
}

/** Opens a MONITOR connection (to the test Redis unless `url` names another); `close()` it in `afterAll`. */
export async function openCommandMonitor(url: string = REDIS_URL): Promise<CommandMonitor> {
  const seen: SentCommand[] = [];
  const monitor = await new Redis(url).monitor();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    seen.push({ command: String(args[0]).toLowerCase(), args: args.slice(1), source });
  });
  return {
    async commandsSentBy(base, action) {
      // A marker command bounds the window: MONITOR streams in order, so once the end marker
      // shows up, every command of `action` has been seen.
      const marker = `${base}marker:${Math.random()}`;
      const probe = new Redis(url);
      try {
        await probe.exists(`${marker}:start`);
        const startIndex = await waitFor(() =>
          seen.findIndex((sent) => sent.args[0] === `${marker}:start`),
        );
        await action();
        await probe.exists(`${marker}:end`);
        const endIndex = await waitFor(() =>
          seen.findIndex((sent) => sent.args[0] === `${marker}:end`),
        );
        return seen
          .slice(startIndex + 1, endIndex)
          .filter((sent) => sent.args.some((arg) => arg.startsWith(base)));
      } finally {
        probe.disconnect();
      }
    },
    close() {
      monitor.disconnect();
    },
  };
}

async function waitFor(find: () => number, timeoutMs = 5_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const index = find();
    if (index !== -1) {
      return index;
    }
    if (Date.now() > deadline) {
      throw new Error('MONITOR did not report the marker in time');
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}
