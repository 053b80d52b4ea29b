import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession } from '../src/index.js';
import { createHarness, firstAnswerOnly, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

describe('events leave a session redacted', () => {
  it('a token in a command the model runs never reaches an event', async () => {
    const npm = `npm_${'k3Y9'.repeat(9)}`;
    const stripe = `sk_live_${'Zq81'.repeat(6)}`;
    const h = await createHarness(
      {
        script: firstAnswerOnly({
          content: [
            {
              type: 'tool_use',
              id: 'toolu_secret',
              name: 'bash',
              input: { command: `echo ${npm} ${stripe} > .npmrc-test; cat missing-${npm}` },
            },
          ],
        }),
      },
      { initialised: true },
    );
    harness = h;
    await runSession(h.options({ sessionNumber: 2 }));
    const toolCall = h.events.find(
      (event) => event.type === 'tool-call' && event.tool === 'bash' && event.turn === 1,
    );
    expect(toolCall).toBeDefined();
    const everything = JSON.stringify(h.events);
    expect(everything).not.toContain(npm);
    expect(everything).not.toContain(stripe);
    expect(JSON.stringify(toolCall)).toContain('[REDACTED:npm_token]');
    expect(JSON.stringify(toolCall)).toContain('[REDACTED:stripe_key]');
  });
});
