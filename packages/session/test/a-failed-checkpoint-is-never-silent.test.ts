import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import type { SimScriptRequest } from '@baton/model-sim';
import { WorkspaceError, type Checkpoint, type CheckpointRequest } from '@baton/workspace';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { runSession } from '../src/index.js';
import { createHarness, removeTemplate, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});
afterAll(removeTemplate);

/** A checkpoint target whose commits fail (what `git add` failing for the workspace did). */
function failingTarget(failures: number) {
  const calls: CheckpointRequest[] = [];
  return {
    calls,
    target: {
      async checkpoint(request: CheckpointRequest): Promise<Checkpoint> {
        calls.push(request);
        if (calls.length <= failures) {
          throw new WorkspaceError(
            'git',
            "git add: 'tools/helper/' does not have a commit checked out",
          );
        }
        return {
          commit: 'c'.repeat(40),
          head: 'c'.repeat(40),
          message: '',
          skipped: [],
          hooks: 'none',
          pushed: true,
        };
      },
    },
  };
}

describe('a failed checkpoint', () => {
  it('is told to the model after the tool results, retried, and carried in the session result', async () => {
    const seen: SimScriptRequest[] = [];
    harness = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    const h = harness;
    const failing = failingTarget(Number.POSITIVE_INFINITY);
    const result = await runSession(
      h.options({ sessionNumber: 2, checkpoints: { target: failing.target, intervalMs: 0 } }),
    );
    // Retried at every opportunity, the end of the session included.
    expect(failing.calls.length).toBeGreaterThan(1);
    const told = seen.find((request) =>
      JSON.stringify(request.params.messages).includes('The checkpoint of your workspace failed'),
    );
    expect(told).toBeDefined();
    // The note follows the tool results of its user turn.
    const last = (told as SimScriptRequest).params.messages.at(-1) as BetaMessageParam;
    const blocks = Array.isArray(last.content) ? last.content : [];
    const noteAt = blocks.findIndex(
      (block) =>
        block.type === 'text' && block.text.includes('checkpoint of your workspace failed'),
    );
    expect(noteAt).toBeGreaterThan(0);
    expect(blocks.slice(0, noteAt).every((block) => block.type === 'tool_result')).toBe(true);
    expect(JSON.stringify(told)).toContain('does not have a commit checked out');
    const failed = h.events.filter(
      (event) => event.type === 'checkpoint' && event.error !== undefined,
    );
    expect(failed.length).toBeGreaterThan(0);
    expect(result.checkpointError).toContain('does not have a commit checked out');
  });

  it('that succeeds on a retry leaves no error behind', async () => {
    harness = await createHarness({}, { initialised: true });
    const h = harness;
    const failing = failingTarget(1);
    const result = await runSession(
      h.options({ sessionNumber: 2, checkpoints: { target: failing.target, intervalMs: 0 } }),
    );
    expect(failing.calls.length).toBeGreaterThan(1);
    expect(result.checkpointError).toBeUndefined();
  });

  it('that is committed but not pushed is counted and told to the model once, without the host path', async () => {
    const seen: SimScriptRequest[] = [];
    harness = await createHarness(
      { script: (request) => void seen.push(request) },
      { initialised: true },
    );
    const h = harness;
    let calls = 0;
    const refused = '/srv/host/repo.git refused the push of baton/x: [remote rejected]';
    const result = await runSession(
      h.options({
        sessionNumber: 2,
        checkpoints: {
          intervalMs: 0,
          target: {
            checkpoint(): Promise<Checkpoint> {
              calls += 1;
              return Promise.resolve({
                commit: String(calls).repeat(40).slice(0, 40),
                head: String(calls).repeat(40).slice(0, 40),
                message: '',
                skipped: [],
                hooks: 'none',
                pushed: false,
                pushError: { code: 'push_failed', message: refused },
              });
            },
          },
        },
      }),
    );
    expect(calls).toBeGreaterThan(1);
    expect(result.checkpointFailures).toBe(calls);
    const told = seen.filter((request) =>
      JSON.stringify(request.params.messages.at(-1)).includes('could not be pushed'),
    );
    expect(told).toHaveLength(1);
    expect(JSON.stringify(seen.map((request) => request.params.messages))).not.toContain(
      '/srv/host',
    );
    expect(result.reason).toContain(`The last checkpoint was not pushed: ${refused}`);
  });
});
