import { createInMemoryStore } from '@baton/core';
import { readFeatures } from '@baton/session';
import { describe, expect, it } from 'vitest';
import { nextSessionKind } from './chaining.js';

const feature = (id: string, passes: boolean) => ({
  id,
  description: `feature ${id}`,
  steps: ['check it'],
  passes,
});

/** What features.json holds in memory -> the session the chain runs next. */
const CASES: Array<{ name: string; content: string | null; kind: 'init' | 'resume' }> = [
  { name: 'no checklist yet', content: null, kind: 'init' },
  { name: 'a checklist that is not JSON', content: '[{"id": "F1",', kind: 'init' },
  { name: 'a checklist that is not an array', content: '{"F1": false}', kind: 'init' },
  {
    name: 'a checklist with a malformed feature',
    content: JSON.stringify([{ id: 'F1', passes: 'no' }]),
    kind: 'init',
  },
  { name: 'an empty checklist', content: '[]', kind: 'init' },
  {
    name: 'a valid checklist with work left',
    content: JSON.stringify([feature('F1', true), feature('F2', false)]),
    kind: 'resume',
  },
  {
    name: 'a valid checklist where everything passes',
    content: JSON.stringify([feature('F1', true)]),
    kind: 'resume',
  },
];

describe('nextSessionKind', () => {
  it.each(CASES)('$name -> $kind', async ({ content, kind }) => {
    const store = createInMemoryStore();
    if (content !== null) await store.write('features.json', content, { mode: 'create' });
    expect(nextSessionKind(await readFeatures(store))).toBe(kind);
  });
});
