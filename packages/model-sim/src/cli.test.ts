import { describe, expect, it } from 'vitest';
import { runModelSimFromCli } from './cli.js';

describe('runModelSimFromCli', () => {
  it('starts on the given port with faults and prints one line with the URL', async () => {
    const lines: string[] = [];
    const sim = await runModelSimFromCli(['--port', '0', '--faults', '{"rateLimitOn":[1]}'], {
      log: (line) => lines.push(line),
      handleSignals: false,
    });
    try {
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(sim.url);
      expect(sim.stats().faults).toEqual({ rateLimitOn: [1] });
    } finally {
      await sim.close();
    }
  });

  it('refuses unknown options and bad values with a usage message', async () => {
    await expect(runModelSimFromCli(['--bogus'])).rejects.toThrow(/Usage: baton sim/);
    await expect(runModelSimFromCli(['--port', 'x'])).rejects.toThrow(/--port/);
    await expect(runModelSimFromCli(['--faults', '{"stallOn":[0]}'])).rejects.toThrow(/stallOn/);
  });
});
