import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { ModelSimError } from './errors.js';
import { ApiError } from './internal/api-errors.js';
import { parseFaults } from './internal/faults.js';
import { destroy, sendError } from './internal/http.js';
import { SimServer } from './internal/sim-server.js';
import type { ModelSim, ModelSimOptions, SimFaults } from './types.js';

/**
 * Starts the simulator on `host:port` (default 127.0.0.1 and a free port). Resolves once it
 * listens; `url` is the base URL to hand to the SDK as `baseURL`.
 */
export async function startModelSim(options: ModelSimOptions = {}): Promise<ModelSim> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new ModelSimError(
      'invalid_options',
      `port must be an integer from 0 to 65535, got ${String(port)}.`,
    );
  }
  const sim = new SimServer(options);
  const server = createServer((request, response) => {
    sim.handle(request, response).catch((error: unknown) => {
      if (response.headersSent) return destroy(response);
      sendError(
        response,
        new ApiError(
          'api_error',
          `The simulator failed: ${String((error as Error)?.message ?? error)}`,
        ),
        'req_sim_internal',
      );
    });
  });
  server.on('connection', (socket: Socket) => {
    sim.sockets.add(socket);
    socket.on('close', () => sim.sockets.delete(socket));
  });
  const url = await listen(server, host, port);

  let closing: Promise<void> | undefined;
  return {
    url,
    get requests() {
      return sim.requests;
    },
    get received() {
      return sim.records;
    },
    setFaults(faults: SimFaults) {
      sim.faults = parseFaults(faults);
    },
    releaseStalls() {
      sim.waiters.releaseStalls();
    },
    waitForStalled(count = 1, timeoutMs = 5000) {
      return sim.waiters.waitForStalled(count, timeoutMs);
    },
    stats: () => sim.stats(),
    close() {
      closing ??= (async () => {
        sim.closed = true;
        sim.waiters.releaseAll();
        const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
        for (const socket of sim.sockets) socket.destroy();
        server.closeAllConnections();
        await stopped;
      })();
      return closing;
    },
  };
}

/** Listens and returns the base URL (with the port the system picked when `port` is 0). */
async function listen(
  server: ReturnType<typeof createServer>,
  host: string,
  port: number,
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    const onError = (error: Error) =>
      reject(
        new ModelSimError(
          'listen_failed',
          `The model simulator could not listen on ${host}:${port}: ${error.message}`,
          { cause: error },
        ),
      );
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  return `http://${host.includes(':') ? `[${host}]` : host}:${boundPort}`;
}
