import { once } from 'node:events';
import { createServer } from 'node:net';

/** Options of `freePort`. */
export interface FreePortOptions {
  /**
   * `port + alsoFreeAt` must be free too: a Cluster node listens on its port and on its bus port
   * (`port + 10000`). Default: only the port itself.
   */
  alsoFreeAt?: number;
}

// Drawn at random from 20000-39999, so parallel test files rarely pick the same one and a Cluster
// bus port (port + 10000) stays valid; a `listen(0)` port can be as high as 60999.
const LOWEST = 20_000;
const SPREAD = 20_000;
const ATTEMPTS = 200;

/** True if nothing listens on `port` on the loopback interface (it listens there for a moment). */
export async function isPortFree(port: number): Promise<boolean> {
  const server = createServer();
  try {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
  } catch {
    return false;
  }
  // Wait for the close, so the port is released before the caller hands it on.
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return true;
}

/** A loopback port nothing listens on now (someone may still take it before the caller does). */
export async function freePort(options: FreePortOptions = {}): Promise<number> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
    const port = LOWEST + Math.floor(Math.random() * SPREAD);
    if (!(await isPortFree(port))) continue;
    if (options.alsoFreeAt === undefined || (await isPortFree(port + options.alsoFreeAt))) {
      return port;
    }
  }
  throw new Error(
    `no free loopback port found in ${ATTEMPTS} tries between ${LOWEST} and ${LOWEST + SPREAD - 1}`,
  );
}
