import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScriptRequest } from '@baton/model-sim';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession, type GuidanceSource, type OperatorGuidance } from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

/** Guidance kept in memory, acknowledged as the session reports. */
function memoryGuidance() {
  const entries: OperatorGuidance[] = [];
  const acknowledged = new Map<string, { sessionId: string; turn: number }>();
  const source: GuidanceSource = {
    pending: () => Promise.resolve(entries.filter((entry) => !acknowledged.has(entry.id))),
    acknowledge: (ids, by) => {
      for (const id of ids) acknowledged.set(id, by);
      return Promise.resolve();
    },
  };
  return { entries, acknowledged, source };
}

function userTexts(message: BetaMessageParam | undefined): string {
  if (message === undefined || message.role !== 'user') return '';
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? [])
    .map((block) => (block.type === 'text' ? block.text : ''))
    .join('\n');
}

describe('operator guidance', () => {
  it('sent while the session waits on the model arrives in the next request, marked, and is acknowledged', async () => {
    const seen: SimScriptRequest[] = [];
    const h = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    harness = h;
    const guidance = memoryGuidance();
    const stalled = h.sim.requests + 2;
    h.sim.setFaults({ stallOn: [stalled] });
    const pending = runSession(h.options({ sessionNumber: 2, guidance: guidance.source }));
    await h.sim.waitForStalled(1, 10_000);
    guidance.entries.push({ id: 'g-1', at: Date.now(), text: 'Use <tabs> & keep it short' });
    h.sim.releaseStalls();
    const result = await pending;
    expect(result.outcome).toBe('completed');
    const byNumber = (number: number) => seen.find((request) => request.number === number)!;
    const carries = (request: SimScriptRequest) =>
      request.params.messages.filter((message) => userTexts(message).includes('id="g-1"')).length;
    // The request in flight did not carry it; the next one did, in its last user message.
    expect(carries(byNumber(stalled))).toBe(0);
    const next = byNumber(stalled + 1).params.messages;
    expect(userTexts(next[next.length - 1])).toMatch(
      /<operator_guidance id="g-1" sent="[^"]+">\nUse &lt;tabs&gt; &amp; keep it short\n<\/operator_guidance>/u,
    );
    // Sent once: every later request holds it exactly once (in the history).
    expect(
      seen.filter((request) => request.number > stalled).every((request) => carries(request) === 1),
    ).toBe(true);
    const sessionTurn = stalled + 1 - seen[0]!.number + 1;
    expect(guidance.acknowledged.get('g-1')).toMatchObject({ turn: sessionTurn });
    expect(h.events).toContainEqual(
      expect.objectContaining({
        type: 'guidance-delivered',
        guidanceIds: ['g-1'],
        turn: sessionTurn,
        inFirstMessage: false,
      }),
    );
  });

  it('guidance no session acknowledged opens the next session first message, in its own section', async () => {
    const seen: SimScriptRequest[] = [];
    const h = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    harness = h;
    const guidance = memoryGuidance();
    guidance.entries.push({ id: 'g-2', at: Date.now(), text: 'Write tests first.' });
    guidance.entries.push({ id: 'g-3', at: Date.now(), text: 'Already seen.' });
    guidance.acknowledged.set('g-3', { sessionId: 'earlier', turn: 4 });
    const result = await runSession(h.options({ sessionNumber: 3, guidance: guidance.source }));
    expect(result.outcome).toBe('completed');
    const first = userTexts(seen[0]!.params.messages[0]);
    expect(first).toContain('Guidance from the operator that no earlier session acknowledged');
    expect(first).toContain('<operator_guidance id="g-2"');
    expect(first).not.toContain('g-3');
    // After the goal, so the cached prefix stays the same for every session.
    expect(first.indexOf('<operator_guidance')).toBeGreaterThan(first.indexOf('</goal>'));
    expect(guidance.acknowledged.get('g-2')).toMatchObject({ turn: 1 });
    expect(JSON.stringify(seen.at(-1)!.params.messages).match(/id=\\"g-2\\"/gu)).toHaveLength(1);
    expect(h.events).toContainEqual(
      expect.objectContaining({
        type: 'guidance-delivered',
        guidanceIds: ['g-2'],
        turn: 1,
        inFirstMessage: true,
      }),
    );
  });
});
