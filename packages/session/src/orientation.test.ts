import { createInMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { formatFeatures, type Feature } from './features.js';
import { buildOrientation } from './orientation.js';
import { rollOverProgressLog } from './progress-log.js';

function features(count: number, passing: number): Feature[] {
  return Array.from({ length: count }, (_, index) => ({
    id: `F${index + 1}`,
    description: `Feature ${index + 1} does its thing`,
    steps: [`Run check ${index + 1}`, `It prints "F${index + 1} ok"`],
    passes: index < passing,
  }));
}

async function project(count: number, passing: number, sessions: number) {
  const store = createInMemoryStore();
  await store.write('features.json', formatFeatures(features(count, passing)), {
    mode: 'create',
  });
  const entries = Array.from(
    { length: sessions },
    (_, index) => `## Session ${index + 1}\n- Worked on F${index}: ${'details '.repeat(20)}`,
  );
  await store.write('progress.md', `# Progress log\n\n${entries.join('\n\n')}\n`, {
    mode: 'create',
  });
  await rollOverProgressLog(store);
  return store;
}

describe('the orientation built from memory', () => {
  it('lists counts, the next failing features with their steps and checklist lines, the latest entries', async () => {
    const store = await project(500, 37, 80);
    const text = await buildOrientation(store, { lastCheckpoint: 'abcdef0123456789' });
    expect(text.startsWith('<baton_orientation>\n')).toBe(true);
    expect(text).toContain(
      'Checklist /memories/features.json (502 lines, one feature per line): 37 of 500 pass, 463 fail.',
    );
    // Line 1 is "[": F38 is on line 39.
    expect(text).toContain('- F38 (features.json line 39): Feature 38 does its thing');
    expect(text).toContain('  - It prints "F38 ok"');
    expect(text).toContain('- F40 (features.json line 41)');
    expect(text).not.toContain('- F41 ');
    expect(text).toContain('## Session 80\n');
    expect(text).toContain('## Session 79\n');
    expect(text).not.toContain('## Session 78\n');
    expect(text).toMatch(/Older entries: \d+ in \d+ archive files? under \/memories\/progress\//);
    expect(text).toContain('commit abcdef012345.');
  });

  it('is deterministic and bounded: the same size at 50 and at 500 features and sessions', async () => {
    const small = await buildOrientation(await project(50, 10, 50));
    const large = await buildOrientation(await project(500, 400, 500));
    expect(await buildOrientation(await project(500, 400, 500))).toBe(large);
    expect(large.length).toBeLessThan(small.length * 1.2);
    expect(large.length).toBeLessThan(5_000);
  });

  it('says when everything passes, and when the checklist is missing or broken', async () => {
    expect(await buildOrientation(await project(3, 3, 2))).toContain(
      'All 3 features pass: nothing is left to do.',
    );
    const store = createInMemoryStore();
    expect(await buildOrientation(store)).toContain('/memories/features.json: missing');
    await store.write('features.json', '{ nope', { mode: 'create' });
    expect(await buildOrientation(store)).toContain('not valid (the file is not valid JSON)');
  });
});
