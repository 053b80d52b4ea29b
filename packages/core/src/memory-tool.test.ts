import { ToolError } from '@anthropic-ai/sdk/resources/beta/messages';
import { describe, expect, it, vi } from 'vitest';
import { MemoryToolError } from './memory-tool-error.js';
import type { MemoryChange, MemoryToolHooks } from './memory-tool-options.js';
import { createMemoryTool } from './memory-tool.js';
import { StoreError, type MemoryStore } from './store.js';
import { createInMemoryStore } from './stores/in-memory-store.js';

function setup(hooks: MemoryToolHooks = {}) {
  const store = createInMemoryStore();
  return { store, tool: createMemoryTool({ store, hooks, session: 's-1', now: () => 1234 }) };
}

/** A store whose every method rejects with `error`. */
function failingStore(error: Error): MemoryStore {
  const fail = () => Promise.reject(error);
  return {
    read: fail,
    stat: fail,
    write: fail,
    edit: fail,
    list: fail,
    delete: fail,
    rename: fail,
    usage: fail,
    close: () => Promise.resolve(),
  };
}

describe('execute validates any input and never throws', () => {
  const cases: Array<[why: string, input: unknown, message: string]> = [
    [
      'not an object',
      'view /memories',
      'Error: Invalid input for the memory tool: expected an object with a "command" field, got a string.',
    ],
    [
      'null',
      null,
      'Error: Invalid input for the memory tool: expected an object with a "command" field, got null.',
    ],
    [
      'an array',
      [],
      'Error: Invalid input for the memory tool: expected an object with a "command" field, got an array.',
    ],
    [
      'no command',
      { path: '/memories' },
      'Error: Invalid input for the memory tool: the field "command" is missing. Expected one of: view, create, str_replace, insert, delete, rename.',
    ],
    [
      'a mistyped command',
      { command: 7 },
      'Error: Invalid input for the memory tool: the field "command" must be a string, got a number. Expected one of: view, create, str_replace, insert, delete, rename.',
    ],
    [
      'an unknown command',
      { command: 'move', path: '/memories' },
      'Error: Unknown memory command "move". Expected one of: view, create, str_replace, insert, delete, rename.',
    ],
    [
      'a missing path',
      { command: 'view' },
      'Error: Invalid input for memory command "view": the field "path" is missing (expected a string).',
    ],
    [
      'a mistyped file_text',
      { command: 'create', path: '/memories/a', file_text: 5 },
      'Error: Invalid input for memory command "create": the field "file_text" must be a string, got a number.',
    ],
    [
      'a missing old_str',
      { command: 'str_replace', path: '/memories/a' },
      'Error: Invalid input for memory command "str_replace": the field "old_str" is missing (expected a string).',
    ],
    [
      'a mistyped new_str',
      { command: 'str_replace', path: '/memories/a', old_str: 'a', new_str: 1 },
      'Error: Invalid input for memory command "str_replace": the field "new_str" must be a string, got a number.',
    ],
    [
      'missing insert fields',
      { command: 'insert', path: '/memories/a' },
      'Error: Invalid input for memory command "insert": the field "insert_line" is missing (expected a number); the field "insert_text" is missing (expected a string).',
    ],
    [
      'a missing new_path',
      { command: 'rename', old_path: '/memories/a' },
      'Error: Invalid input for memory command "rename": the field "new_path" is missing (expected a string).',
    ],
    [
      'mistyped view_range items',
      { command: 'view', path: '/memories', view_range: ['1', 2] },
      'Error: Invalid input for memory command "view": the field "view_range.0" must be a number, got a string.',
    ],
  ];

  it.each(cases)('rejects %s with a message naming the problem', async (_why, input, message) => {
    const { tool } = setup();
    await expect(tool.execute(input)).resolves.toEqual({ content: message, isError: true });
  });

  it('ignores unknown extra fields', async () => {
    const { tool } = setup();
    const result = await tool.execute({ command: 'view', path: '/memories', extra: true });
    expect(result.isError).toBe(false);
  });

  it('turns a failing store into a generic message without internals and reports the error', async () => {
    const secret = new Error('EACCES: permission denied, open /home/alice/.baton/memories/a.md');
    const broken = failingStore(secret);
    const onUnexpectedError = vi.fn();
    const tool = createMemoryTool({ store: broken, hooks: { onUnexpectedError } });
    const result = await tool.execute({ command: 'view', path: '/memories/a.md' });
    expect(result).toEqual({
      content: 'Error: The memory tool failed unexpectedly while running view.',
      isError: true,
    });
    expect(onUnexpectedError).toHaveBeenCalledWith(secret, { command: 'view', source: 'command' });
  });

  it('maps StoreError codes to protocol messages in one place (unavailable store)', async () => {
    const broken = failingStore(new StoreError('unavailable', 'Redis at 10.0.0.5:6379 is down'));
    const tool = createMemoryTool({ store: broken });
    const result = await tool.execute({ command: 'view', path: '/memories' });
    expect(result.isError).toBe(true);
    expect(result.content).toBe(
      'Error: The memory store is unavailable right now. Try again later.',
    );
  });

  it('rejects nonsense limits at construction', () => {
    const store = createInMemoryStore();
    expect(() => createMemoryTool({ store, limits: { maxFileBytes: -1 } })).toThrow(/maxFileBytes/);
    expect(() => createMemoryTool({ store, limits: { maxViewChars: 10 } })).toThrow(/maxViewChars/);
    expect(createMemoryTool({ store, limits: { maxFiles: Infinity } }).limits.maxFiles).toBe(
      Infinity,
    );
    expect(createMemoryTool({ store }).limits).toEqual({
      maxFileBytes: 1_048_576,
      maxTotalBytes: 52_428_800,
      maxFiles: 1_000,
      maxViewChars: 16_000,
      maxPathLength: 1_024,
      maxNameLength: 255,
    });
  });
});

describe('handlers satisfy the SDK and throw ToolError with our exact text', () => {
  it('returns the content on success', async () => {
    const { tool } = setup();
    await expect(
      tool.handlers.create({ command: 'create', path: '/memories/a.md', file_text: 'x' }),
    ).resolves.toBe('File created successfully at: /memories/a.md');
  });

  it('throws a ToolError whose content is the protocol string (the runner adds no prefix)', async () => {
    const { tool } = setup();
    const error = await Promise.resolve(
      tool.handlers.view({ command: 'view', path: '/memories/none' }),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ToolError);
    expect((error as ToolError).content).toBe(
      'The path /memories/none does not exist. Please provide a valid path.',
    );
  });

  it('validates inputs that do not match their handler', async () => {
    const { tool } = setup();
    const error = await Promise.resolve(
      tool.handlers.insert({ command: 'insert', path: '/memories/a' } as never),
    ).catch((caught: unknown) => caught);
    expect((error as ToolError).content).toContain('the field "insert_line" is missing');
  });
});

describe('hooks', () => {
  it('beforeWrite sees every write and can transform it (redaction)', async () => {
    const writes: unknown[] = [];
    const { tool, store } = setup({
      beforeWrite: (write) => {
        writes.push(write);
        return write.after.replace(/sk-[a-z0-9]+/g, '[redacted]');
      },
    });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'key sk-abc123\n' });
    await tool.execute({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'key',
      new_str: 'token sk-zzz',
    });
    await tool.execute({
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 0,
      insert_text: 'top',
    });
    expect(await store.read('a.md')).toBe('top\ntoken [redacted] [redacted]\n');
    expect(writes).toEqual([
      { command: 'create', path: '/memories/a.md', before: null, after: 'key sk-abc123\n' },
      {
        command: 'str_replace',
        path: '/memories/a.md',
        before: 'key [redacted]\n',
        after: 'token sk-zzz [redacted]\n',
      },
      {
        command: 'insert',
        path: '/memories/a.md',
        before: 'token [redacted] [redacted]\n',
        after: 'top\ntoken [redacted] [redacted]\n',
      },
    ]);
  });

  it('beforeWrite refuses with MemoryToolError: the message goes verbatim and nothing is written', async () => {
    const { tool, store } = setup({
      beforeWrite: (write) => {
        if (write.after.includes('passes": true'))
          throw new MemoryToolError('Refused: feature F1 has not been verified.');
        return undefined;
      },
    });
    await tool.execute({
      command: 'create',
      path: '/memories/f.json',
      file_text: '{"passes": false}',
    });
    expect(
      await tool.execute({
        command: 'str_replace',
        path: '/memories/f.json',
        old_str: 'false',
        new_str: 'true',
      }),
    ).toEqual({ content: 'Refused: feature F1 has not been verified.', isError: true });
    expect(await store.read('f.json')).toBe('{"passes": false}');
  });

  it('a beforeWrite that crashes refuses the write without leaking its error', async () => {
    const onUnexpectedError = vi.fn();
    const { tool, store } = setup({
      beforeWrite: () => {
        throw new TypeError('cannot read /srv/secret');
      },
      onUnexpectedError,
    });
    const result = await tool.execute({
      command: 'create',
      path: '/memories/a.md',
      file_text: 'x',
    });
    expect(result).toEqual({
      content:
        'Error: The write to /memories/a.md was refused by a check that failed unexpectedly. Nothing was changed.',
      isError: true,
    });
    expect(await store.stat('a.md')).toBeNull();
    expect(onUnexpectedError).toHaveBeenCalledOnce();
  });

  it('afterChange reports every mutation with command, path, bytes, time and session', async () => {
    const changes: MemoryChange[] = [];
    const { tool } = setup({ afterChange: (change) => void changes.push(change) });
    await tool.execute({ command: 'view', path: '/memories' });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'abc' });
    await tool.execute({
      command: 'str_replace',
      path: '/memories/a.md',
      old_str: 'b',
      new_str: 'BB',
    });
    await tool.execute({
      command: 'insert',
      path: '/memories/a.md',
      insert_line: 1,
      insert_text: 'z',
    });
    await tool.execute({
      command: 'rename',
      old_path: '/memories/a.md',
      new_path: '/memories/b.md',
    });
    await tool.execute({ command: 'create', path: '/memories/a.md', file_text: 'abc' });
    await tool.execute({ command: 'delete', path: '/memories/b.md' });
    await tool.execute({ command: 'delete', path: '/memories/b.md' });
    const base = { at: 1234, session: 's-1' };
    expect(changes).toEqual([
      { command: 'create', path: '/memories/a.md', bytes: 3, ...base },
      { command: 'str_replace', path: '/memories/a.md', bytes: 4, ...base },
      { command: 'insert', path: '/memories/a.md', bytes: 6, ...base },
      { command: 'rename', path: '/memories/a.md', newPath: '/memories/b.md', bytes: 6, ...base },
      { command: 'create', path: '/memories/a.md', bytes: 3, ...base },
      { command: 'delete', path: '/memories/b.md', bytes: 0, ...base },
    ]);
  });

  it('an afterChange failure is swallowed and reported to onHookError', async () => {
    const onHookError = vi.fn();
    const failure = new Error('feed down');
    const { tool, store } = setup({
      afterChange: () => Promise.reject(failure),
      onHookError,
    });
    const result = await tool.execute({
      command: 'create',
      path: '/memories/a.md',
      file_text: 'x',
    });
    expect(result).toEqual({
      content: 'File created successfully at: /memories/a.md',
      isError: false,
    });
    expect(await store.read('a.md')).toBe('x');
    expect(onHookError).toHaveBeenCalledWith(failure, { command: 'create', source: 'afterChange' });
  });
});
