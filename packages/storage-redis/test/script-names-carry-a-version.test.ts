/**
 * Scripts are registered on a client as `<name>:<version>`, the version a hash of the body: two
 * script sets that differ (two versions of Baton sharing one client or one Redis) never run each
 * other's body under one name, and a changed body, or a changed include, gets a new name.
 */
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { createLuaScripts, type LuaScripts } from '../src/index.js';
import { REDIS_URL } from './helpers.js';

interface Commands {
  answer(key: string): Promise<string>;
}

const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
const folders: string[] = [];

afterAll(() => {
  redis.disconnect();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A script set whose `answer` script returns `reply` (through an include saying `suffix`). */
function scriptSet(reply: string, suffix = ''): LuaScripts<Commands> {
  const folder = mkdtempSync(path.join(tmpdir(), 'baton-scripts-'));
  folders.push(folder);
  mkdirSync(path.join(folder, 'includes'));
  writeFileSync(path.join(folder, 'includes', 'suffix.lua'), `local suffix = '${suffix}'\n`);
  writeFileSync(
    path.join(folder, 'answer-1.lua'),
    `--- @include "suffix"\nreturn '${reply}' .. suffix .. ':' .. KEYS[1]\n`,
  );
  return createLuaScripts<Commands>({
    directory: pathToFileURL(`${folder}/`),
    files: { answer: 'answer-1.lua' },
  });
}

describe('script names carry a version', () => {
  it('two script sets of different versions on one client each run their own body', async () => {
    const older = scriptSet('older');
    const newer = scriptSet('newer');
    expect(await older.call(redis, 'answer', 'k')).toBe('older:k');
    expect(await newer.call(redis, 'answer', 'k')).toBe('newer:k');
    // The first one registered is not overwritten by the second.
    expect(await older.call(redis, 'answer', 'k')).toBe('older:k');

    const pipeline = newer.pipeline(redis);
    older.queue(pipeline, 'answer', 'a');
    newer.queue(pipeline, 'answer', 'b');
    expect((await pipeline.exec())?.map(([, reply]) => reply)).toEqual(['older:a', 'newer:b']);
  });

  it('is registered as <name>:<version>, and a changed body or include gets a new version', () => {
    const base = scriptSet('same');
    const { command, version } = base.script('answer');
    expect(command).toBe(`answer:${version}`);
    expect(version).toMatch(/^[0-9a-f]{12}$/u);
    expect(scriptSet('same').script('answer').command).toBe(command);
    expect(scriptSet('changed').script('answer').command).not.toBe(command);
    expect(scriptSet('same', 'x').script('answer').command).not.toBe(command);
  });

  it('the memory store’s scripts are registered under versioned names only', async () => {
    const client = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 });
    try {
      const { scripts: memory } = await import('../src/internal/scripts.js');
      memory.pipeline(client);
      const names = Object.keys((client as unknown as { scriptsSet: object }).scriptsSet);
      expect(names).toContain(memory.script('fence').command);
      for (const name of names) expect(name).toMatch(/^[a-zA-Z]+:[0-9a-f]{12}$/u);
    } finally {
      client.disconnect();
    }
  });

  it('a script set refuses to queue on a pipeline that does not know its scripts', () => {
    const set = scriptSet('alone');
    expect(() => {
      set.queue(redis.pipeline(), 'answer', 'k');
    }).toThrow(/not registered here/u);
  });
});
