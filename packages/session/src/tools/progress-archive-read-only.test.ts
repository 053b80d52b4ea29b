import { createInMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { formatFeatures } from '../features.js';
import { PROGRESS_ARCHIVE_RULE, readProgressLog, rollOverProgressLog } from '../progress-log.js';
import { createSessionMemoryTool } from './memory.js';

const FEATURES = Array.from({ length: 500 }, (_, index) => ({
  id: `F${index + 1}`,
  description: `Feature ${index + 1}`,
  steps: [`check ${index + 1}`],
  passes: false,
}));

async function setup() {
  const store = createInMemoryStore();
  const entries = Array.from(
    { length: 120 },
    (_, index) => `## Session ${index + 1}\n- ${'work '.repeat(30)}`,
  );
  await store.write('progress.md', `# Progress log\n\n${entries.join('\n\n')}\n`, {
    mode: 'create',
  });
  await store.write('features.json', formatFeatures(FEATURES), { mode: 'create' });
  await rollOverProgressLog(store);
  const tool = createSessionMemoryTool({ store, session: 's1' });
  return { store, tool };
}

describe('the archived progress log is read-only to the agent, and a 500-feature checklist stays guarded', () => {
  it('refuses every way of changing an archive and leaves it byte for byte', async () => {
    const { store, tool } = await setup();
    const archive = '/memories/progress/0001.md';
    const before = await store.read('progress/0001.md');
    const wholeLog = await readProgressLog(store);
    expect(before).toContain('## Session 1\n');
    const attempts = [
      { command: 'create', path: '/memories/progress/0099.md', file_text: 'x' },
      { command: 'create', path: archive, file_text: 'overwritten' },
      { command: 'str_replace', path: archive, old_str: '## Session 1\n', new_str: '## S\n' },
      { command: 'insert', path: archive, insert_line: 0, insert_text: 'x\n' },
      { command: 'delete', path: archive },
      { command: 'delete', path: '/memories/progress' },
      { command: 'delete', path: '/memories/progress/' },
      { command: 'rename', old_path: archive, new_path: '/memories/old.md' },
      { command: 'rename', old_path: '/memories/progress', new_path: '/memories/gone' },
      { command: 'rename', old_path: '/memories/startup.md', new_path: archive },
      { command: 'create', path: '/memories/./progress/0001.md', file_text: 'x' },
      {
        command: 'str_replace',
        path: '/memories/notes/../progress/0001.md',
        old_str: 'S',
        new_str: 'T',
      },
    ];
    for (const input of attempts) {
      const result = await tool.execute(input);
      expect(result.isError, JSON.stringify(input)).toBe(true);
    }
    expect((await tool.execute(attempts[0]!)).content).toBe(PROGRESS_ARCHIVE_RULE);
    expect(await store.read('progress/0001.md')).toBe(before);
    expect(await store.read('progress/0099.md')).toBeNull();
    expect(await readProgressLog(store)).toBe(wholeLog);
    // Reading stays allowed, and so does appending to progress.md.
    expect((await tool.execute({ command: 'view', path: archive })).isError).toBe(false);
    const lines = ((await store.read('progress.md')) ?? '').trimEnd().split('\n').length;
    const appended = await tool.execute({
      command: 'insert',
      path: '/memories/progress.md',
      insert_line: lines,
      insert_text: '\n## Session 121\n- more\n',
    });
    expect(appended.isError).toBe(false);
  });

  it('flips one feature of 500 by its own line, and still refuses changing ids, descriptions and steps', async () => {
    const { store, tool } = await setup();
    const page = await tool.execute({
      command: 'view',
      path: '/memories/features.json',
      view_range: [251, 251],
    });
    expect(page.content).toContain('"id": "F250"');
    const before = (await store.read('features.json'))!;
    const flipped = await tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str:
        '{"id": "F250", "description": "Feature 250", "steps": ["check 250"], "passes": false}',
      new_str:
        '{"id": "F250", "description": "Feature 250", "steps": ["check 250"], "passes": true}',
    });
    expect(flipped.isError).toBe(false);
    const after = (await store.read('features.json'))!;
    const changed = after
      .split('\n')
      .map((line, index) => (line === before.split('\n')[index] ? null : index + 1))
      .filter((line) => line !== null);
    expect(changed).toEqual([251]);
    for (const [from, to] of [
      ['"id": "F300"', '"id": "F300x"'],
      ['"description": "Feature 301"', '"description": "Feature 301 (easier)"'],
      ['"steps": ["check 302"]', '"steps": []'],
    ] as const) {
      const refused = await tool.execute({
        command: 'str_replace',
        path: '/memories/features.json',
        old_str: from,
        new_str: to,
      });
      expect(refused.isError).toBe(true);
      expect(refused.content).toMatch(/^Refused: /);
    }
    expect(await store.read('features.json')).toBe(after);
  });
});
