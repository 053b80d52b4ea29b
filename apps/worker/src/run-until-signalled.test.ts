import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { loadWorkerConfig } from './config.js';
import { runUntilSignalled } from './run-until-signalled.js';
import type { RunningWorker } from './start-worker.js';

const config = loadWorkerConfig({ BATON_MODEL: 'sim' });

/** A started worker whose shutdown is counted; `start` resolves with it when told to. */
function fakeStart() {
  const shutdown = vi.fn(async () => ({ drained: true }));
  const worker = { logger: pino({ level: 'silent' }), shutdown } as unknown as RunningWorker;
  let finishStart: () => void = () => undefined;
  const started = new Promise<RunningWorker>((resolve) => (finishStart = () => resolve(worker)));
  let calledStart: () => void = () => undefined;
  const startCalled = new Promise<void>((resolve) => (calledStart = resolve));
  const start = () => {
    calledStart();
    return started;
  };
  return { start, startCalled, finishStart, shutdown };
}

describe('runUntilSignalled', () => {
  const listenersBefore = process.listenerCount('SIGTERM');
  afterEach(() => {
    vi.restoreAllMocks();
    for (const signal of ['SIGTERM', 'SIGINT'] as const) {
      for (const listener of process.listeners(signal).slice(listenersBefore)) {
        process.off(signal, listener);
      }
    }
  });

  it('hears a signal during the start and drains once the start returns', async () => {
    const fake = fakeStart();
    const result = runUntilSignalled(config, { start: fake.start });
    await fake.startCalled;
    process.emit('SIGTERM', 'SIGTERM');
    expect(fake.shutdown).not.toHaveBeenCalled();
    fake.finishStart();
    expect(await result).toEqual({ drained: true });
    expect(fake.shutdown).toHaveBeenCalledTimes(1);
  });

  it('exits 130 at once on a second signal, during the start as after it', async () => {
    const exit = vi.spyOn(process, 'exit').mockImplementation((code) => {
      throw new Error(`exit ${String(code)}`);
    });
    const fake = fakeStart();
    void runUntilSignalled(config, { start: fake.start });
    await fake.startCalled;
    process.emit('SIGINT', 'SIGINT');
    expect(() => process.emit('SIGINT', 'SIGINT')).toThrow('exit 130');
    expect(exit).toHaveBeenCalledWith(130);
  });

  it("rejects with the start's error and stops listening", async () => {
    const failure = new Error('redis down');
    await expect(runUntilSignalled(config, { start: () => Promise.reject(failure) })).rejects.toBe(
      failure,
    );
    expect(process.listenerCount('SIGTERM')).toBe(listenersBefore);
  });
});
