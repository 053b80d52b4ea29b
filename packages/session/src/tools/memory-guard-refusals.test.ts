import { createInMemoryStore } from '@baton/core';
import { describe, expect, it } from 'vitest';
import { createSessionMemoryTool } from './memory.js';

const checklist = JSON.stringify(
  [
    { id: 'F1', description: 'Add a todo', steps: ['add', 'list'], passes: false },
    { id: 'F2', description: 'Remove a todo', steps: ['remove'], passes: false },
  ],
  null,
  2,
);

async function setup(options: { allowFeatureAdditions?: boolean } = {}) {
  const store = createInMemoryStore();
  const changes: string[] = [];
  const tool = createSessionMemoryTool({
    store,
    session: 's1',
    ...options,
    onChange: (change) => void changes.push(`${change.command} ${change.path}`),
  });
  const created = await tool.execute({
    command: 'create',
    path: '/memories/features.json',
    file_text: checklist,
  });
  expect(created.isError).toBe(false);
  return { store, tool, changes };
}

describe('the agent reads why a checklist write was refused', () => {
  it('allows flipping passes with a multi-line str_replace', async () => {
    const { tool, store, changes } = await setup();
    const result = await tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '"steps": [\n      "add",\n      "list"\n    ],\n    "passes": false',
      new_str: '"steps": [\n      "add",\n      "list"\n    ],\n    "passes": true',
    });
    expect(result.isError).toBe(false);
    expect(JSON.parse((await store.read('features.json')) ?? '')[0].passes).toBe(true);
    expect(changes).toEqual([
      'create /memories/features.json',
      'str_replace /memories/features.json',
    ]);
  });

  it('refuses deleting a feature through str_replace, and nothing changes', async () => {
    const { tool, store } = await setup();
    const feature2 = checklist.slice(
      checklist.indexOf(',\n  {\n    "id": "F2"'),
      checklist.lastIndexOf('}') + 1,
    );
    const result = await tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: feature2,
      new_str: '',
    });
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(
      /^Refused: this write would remove feature F2\. Nothing was written\. Rule: /,
    );
    expect(await store.read('features.json')).toBe(checklist);
  });

  it('refuses rewriting a description and breaking the JSON', async () => {
    const { tool } = await setup();
    const renamed = await tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: 'Add a todo',
      new_str: 'Add',
    });
    expect(renamed.content).toContain('change the description of F1');
    const broken = await tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '"passes": false\n  }\n]',
      new_str: '"passes": false',
    });
    expect(broken.content).toContain('invalid (the file is not valid JSON)');
  });

  it('refuses deleting, renaming or overwriting the checklist', async () => {
    const { tool, store } = await setup();
    for (const input of [
      { command: 'delete', path: '/memories/features.json' },
      { command: 'delete', path: '/memories' },
      { command: 'rename', old_path: '/memories/features.json', new_path: '/memories/old.json' },
      { command: 'create', path: '/memories/features.json', file_text: '[]' },
    ]) {
      const result = await tool.execute(input);
      expect(result.isError, JSON.stringify(input)).toBe(true);
      expect(result.content).toContain('Rule: /memories/features.json is the project');
    }
    expect(await store.read('features.json')).toBe(checklist);
  });

  it('redacts secrets before they are stored', async () => {
    const { tool, store } = await setup();
    await tool.execute({
      command: 'create',
      path: '/memories/notes.md',
      file_text: 'key sk-ant-api03-abcdefghijklmnopqrstuvwx\n',
    });
    expect(await store.read('notes.md')).toBe('key [REDACTED:anthropic_key]\n');
  });

  it('lets init append features, but not later sessions', async () => {
    const extra =
      ',\n  { "id": "F3", "description": "Edit", "steps": ["edit"], "passes": false }\n]';
    const later = await setup();
    const refused = await later.tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '\n]',
      new_str: extra,
    });
    expect(refused.content).toContain('add feature F3 after initialisation');
    const init = await setup({ allowFeatureAdditions: true });
    const allowed = await init.tool.execute({
      command: 'str_replace',
      path: '/memories/features.json',
      old_str: '\n]',
      new_str: extra,
    });
    expect(allowed.isError).toBe(false);
  });
});
