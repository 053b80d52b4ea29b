import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { cliWorld } from '@baton/test-support';
import { cliEnv, runCli, startCli, type CliProcess } from './helpers.js';

// `baton sim` is the simulator as a process of its own (docs/model-sim.md): the SDK talks to it
// over HTTP as it would to the API, and --faults makes it answer as the API does under load.
const world = cliWorld();

async function startSim(...args: string[]): Promise<{ url: string; process: CliProcess }> {
  const sim = startCli(['sim', '--port', '0', ...args], { cwd: world.dir, env: cliEnv(world.dir) });
  world.closeAfter({
    close: async () => {
      sim.kill('SIGINT');
      await sim.done;
    },
  });
  await sim.waitForOutput('Press Ctrl-C to stop.');
  const url = /listening on (http:\/\/\S+?) /.exec(sim.stdout())?.[1];
  expect(url).toBeDefined();
  return { url: url ?? '', process: sim };
}

function ask(client: Anthropic) {
  return client.messages.create({
    model: 'claude-test',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hello' }],
  });
}

describe('baton sim', () => {
  it('--faults {"rateLimitOn":[1]} answers the first request 429 like the API, then serves', async () => {
    const { url } = await startSim('--faults', '{"rateLimitOn":[1]}');
    const client = new Anthropic({ apiKey: 'any', baseURL: url, maxRetries: 0 });
    const error = await ask(client).then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(Anthropic.RateLimitError);
    expect((error as InstanceType<typeof Anthropic.RateLimitError>).status).toBe(429);
    const message = await ask(client);
    expect(message.type).toBe('message');
  });

  it('without --faults the first request is served; Ctrl-C stops it with exit 0', async () => {
    const { url, process } = await startSim();
    const client = new Anthropic({ apiKey: 'any', baseURL: url, maxRetries: 0 });
    expect((await ask(client)).type).toBe('message');
    process.kill('SIGINT');
    expect((await process.done).code).toBe(0);
  });

  it('a --faults value that is not JSON, or names an unknown fault, is one line and exit 2', async () => {
    for (const faults of ['{rateLimitOn', '{"meteorStrike":[1]}']) {
      const result = await runCli(['sim', '--port', '0', '--faults', faults], {
        cwd: world.dir,
        env: cliEnv(world.dir),
      });
      expect(result.code, faults).toBe(2);
      expect(result.stderr.trim().split('\n'), faults).toHaveLength(1);
    }
  });
});
