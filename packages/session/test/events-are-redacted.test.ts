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

  it('a key cut at the summary boundary and HTTP Basic credentials never reach an event', async () => {
    // The 80-character summary cut lands inside the key: cut first, it would be too short for
    // its rule and its prefix would stay in events.jsonl.
    const openai = `sk-proj-AbCd${'Xy7q'.repeat(8)}`;
    const command = `echo ${'x'.repeat(62)} ${openai}`;
    const basic = 'dXNlcjpodW50ZXIyLXZlcnktc2VjcmV0';
    const h = await createHarness(
      {
        script: firstAnswerOnly({
          content: [
            { type: 'tool_use', id: 'toolu_cut', name: 'bash', input: { command } },
            {
              type: 'tool_use',
              id: 'toolu_basic',
              name: 'bash',
              input: { command: `echo "Authorization: Basic ${basic}"` },
            },
          ],
        }),
      },
      { initialised: true },
    );
    harness = h;
    await runSession(h.options({ sessionNumber: 2 }));
    const calls = h.events.filter((event) => event.type === 'tool-call' && event.turn === 1);
    expect(calls).toHaveLength(2);
    const everything = JSON.stringify(h.events);
    expect(everything).not.toContain('sk-proj-AbC');
    expect(everything).not.toContain(basic);
    expect(everything).not.toContain(basic.slice(0, 12));
    expect(JSON.stringify(calls[1])).toContain('[REDACTED:http_basic_credentials]');
  });
});
