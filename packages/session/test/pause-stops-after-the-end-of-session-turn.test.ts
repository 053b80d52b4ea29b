import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScriptRequest } from '@baton/model-sim';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession } from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

function lastUserText(request: SimScriptRequest): string {
  const messages: BetaMessageParam[] = request.params.messages;
  const last = messages[messages.length - 1];
  if (last === undefined) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content ?? []).map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

describe('a pause signal', () => {
  it('aborts the request in flight, runs the end-of-session turn and reports paused, not cancelled', async () => {
    const seen: SimScriptRequest[] = [];
    const h = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    harness = h;
    h.sim.setFaults({ stallOn: [h.sim.requests + 3] });
    const pause = new AbortController();
    const cancel = new AbortController();
    const pending = runSession(
      h.options({ sessionNumber: 2, signal: cancel.signal, pauseSignal: pause.signal }),
    );
    await h.sim.waitForStalled(1, 10_000);
    pause.abort();
    const result = await pending;
    expect(result).toMatchObject({ outcome: 'paused', stopReason: 'paused' });
    expect(result.reason).toBe('The operator paused the project.');
    const closing = seen.find((request) =>
      lastUserText(request).includes('<baton_end_of_session reason="paused">'),
    );
    expect(closing).toBeDefined();
    expect(lastUserText(closing!)).toContain('the operator paused the project');
    expect(await h.store.read('progress.md')).toContain('Session 2 end');
    const end = h.events.at(-1);
    expect(end).toMatchObject({ type: 'session-end', result: { outcome: 'paused' } });
  });

  it('an already paused signal sends nothing and still reports paused', async () => {
    const h = await createHarness({}, { initialised: true });
    harness = h;
    const before = h.sim.requests;
    const result = await runSession(
      h.options({ sessionNumber: 2, pauseSignal: AbortSignal.abort() }),
    );
    expect(result).toMatchObject({ outcome: 'paused', turns: 0 });
    expect(h.sim.requests).toBe(before);
  });
});
