import type Anthropic from '@anthropic-ai/sdk';
import type { BetaContextManagementConfig } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ModelSim } from '../src/index.js';
import type { MemoryStandIn } from './support/memory-stand-in.js';
import type { WorkspaceTools } from './support/workspace-tools.js';
import { useSimSession } from './support/sim-session-fixture.js';
import { SESSION_TOOLS, driveSession, sessionPrompt } from './support/drive-session.js';
import type { DriveOptions } from './support/drive-session.js';

const GOAL = 'Tiny tool.\n- First thing\n- Second thing';
const BETAS = ['context-management-2025-06-27'];

let sim: ModelSim;
let client: Anthropic;
let memory: MemoryStandIn;
let workspace: WorkspaceTools;
useSimSession((fixture) => ({ sim, client, memory, workspace } = fixture), {
  tempPrefix: 'baton-sim-ctx-',
});

// Every test continues a project whose first session already ran.
beforeEach(async () => {
  await driveSession({
    client,
    memory,
    workspace,
    prompt: sessionPrompt({ kind: 'init', session: 1, goal: GOAL }),
  });
});

const aggressive: BetaContextManagementConfig = {
  edits: [
    {
      type: 'clear_tool_uses_20250919',
      trigger: { type: 'input_tokens', value: 300 },
      keep: { type: 'tool_uses', value: 1 },
    },
  ],
};

/** Session 2 of the project; `options` (context management, streaming) go to driveSession. */
function resumeSession(options: Pick<DriveOptions, 'contextManagement' | 'stream'> = {}) {
  return driveSession({
    client,
    memory,
    workspace,
    prompt: sessionPrompt({ kind: 'resume', session: 2, goal: GOAL }),
    ...options,
  });
}

describe('context editing emulation', () => {
  it('clears old tool results above a low trigger: lower input_tokens and applied_edits in the response', async () => {
    const result = await resumeSession({ contextManagement: aggressive });
    const cleared = result.responses.filter(
      (response) => (response.context_management?.applied_edits.length ?? 0) > 0,
    );
    expect(cleared.length).toBeGreaterThan(0);
    const edit = cleared[0]?.context_management?.applied_edits[0];
    expect(edit).toMatchObject({ type: 'clear_tool_uses_20250919' });
    expect(edit && 'cleared_tool_uses' in edit && edit.cleared_tool_uses).toBeGreaterThan(0);

    // The last request's history counted without clearing is larger than what was billed.
    const last = sim.received.at(-1);
    expect(last?.inputTokensAfter).toBeLessThan(last?.inputTokensBefore ?? 0);
    expect(result.responses.at(-1)?.usage.input_tokens).toBe(last?.inputTokensAfter);
    const uncounted = await client.beta.messages.countTokens({
      model: 'sim',
      system: 'You are a Baton test agent.',
      tools: SESSION_TOOLS,
      messages: result.messages.slice(0, -1),
    });
    expect(uncounted.input_tokens).toBe(last?.inputTokensBefore);

    // The agent still finished its feature: it re-read what clearing took away.
    expect(JSON.parse(memory.files.get('/memories/features.json') ?? '[]')[0].passes).toBe(true);
  });

  it('reports context_management null without the field and an empty applied_edits below the trigger', async () => {
    const plain = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(plain.context_management).toBeNull();
    const below = await client.beta.messages.create({
      model: 'sim',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      betas: BETAS,
    });
    expect(below.context_management).toEqual({ applied_edits: [] });
  });

  it('streams applied_edits in message_delta', async () => {
    const result = await resumeSession({ contextManagement: aggressive, stream: true });
    expect(
      result.responses.some(
        (response) => (response.context_management?.applied_edits.length ?? 0) > 0,
      ),
    ).toBe(true);
  });

  it('count_tokens applies context_management and reports original_input_tokens', async () => {
    const result = await resumeSession();
    const counted = await client.beta.messages.countTokens({
      model: 'sim',
      tools: SESSION_TOOLS,
      messages: result.messages,
      context_management: aggressive,
      betas: BETAS,
    });
    expect(counted.context_management?.original_input_tokens).toBeGreaterThan(counted.input_tokens);
  });
});
