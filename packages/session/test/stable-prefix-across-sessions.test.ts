import type { SimScriptRequest } from '@baton/model-sim';
import { afterEach, describe, expect, it } from 'vitest';
import { runSession } from '../src/index.js';
import { createHarness, type Harness } from './helpers.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe('the cached prefix is the same for every session of every project', () => {
  it('tools and system never change; project, session number and interruption are in the first user message', async () => {
    const seen: SimScriptRequest[] = [];
    harness = await createHarness({
      script: (request) => {
        seen.push(request);
        return undefined;
      },
    });
    const h = harness;
    const init = await runSession(h.options({ kind: 'init', sessionNumber: 1 }));
    expect(init.outcome).toBe('completed');
    const initRequests = seen.length;
    const resume = await runSession(
      h.options({
        kind: 'resume',
        sessionNumber: 2,
        interrupted: true,
        project: { id: 'another-project', goal: 'Something else entirely.' },
      }),
    );
    expect(resume.turns).toBeGreaterThan(0);
    expect(seen.length).toBeGreaterThan(initRequests);

    const prefixes = new Set(
      seen.map((request) =>
        JSON.stringify({ system: request.params.system, tools: request.params.tools }),
      ),
    );
    expect(prefixes.size).toBe(1);
    const first = JSON.stringify(seen[initRequests]!.params.messages[0]);
    expect(first).toContain('project=\\"another-project\\" session=\\"2\\" interrupted=\\"true\\"');
    expect(first).toContain('Something else entirely.');
    expect(JSON.stringify(seen[0]!.params.system)).not.toContain('todo');
  });
});
