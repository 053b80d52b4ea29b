import { appendFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFileGuidance } from './file-guidance.js';
import { fileProjectPaths } from './file-project-paths.js';
import { GUIDANCE_KEPT } from './operator.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(path.join(tmpdir(), 'baton-file-guidance-'));
  // The project's directory exists: `baton run` made it (say --local checks the project first).
  await mkdir(fileProjectPaths(home, 'p').dir, { recursive: true });
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe('a baton run project’s guidance in its directory', () => {
  it('keeps what say adds until a session acknowledges it, and says who did', async () => {
    const paths = fileProjectPaths(home, 'p');
    const guidance = createFileGuidance(paths);
    // No file yet: nothing pending (a project nobody said anything to).
    expect(await guidance.pending()).toEqual([]);
    const first = await guidance.add('use pnpm');
    const second = await guidance.add('keep commits small');
    expect(await guidance.pending()).toEqual([first, second]);
    await guidance.acknowledge([first.id], { sessionId: 's1', turn: 3 });
    expect(await guidance.pending()).toEqual([second]);
    expect(await guidance.list()).toEqual([
      { ...first, acknowledged: { sessionId: 's1', turn: 3, at: expect.any(Number) } },
      { ...second, acknowledged: null },
    ]);
    // Another process (baton say --local) reads the same files.
    expect(await createFileGuidance(fileProjectPaths(home, 'p')).pending()).toEqual([second]);
    expect((await readFile(paths.guidance, 'utf8')).split('\n')).toHaveLength(3);
  });

  it('skips a line still being written, and keeps the newest GUIDANCE_KEPT messages', async () => {
    const paths = fileProjectPaths(home, 'p');
    const guidance = createFileGuidance(paths);
    const whole = await guidance.add('whole');
    await appendFile(paths.guidance, '{"id":"g-half","at":1,"te');
    expect(await guidance.pending()).toEqual([whole]);
    await rm(paths.guidance);
    for (let index = 0; index <= GUIDANCE_KEPT; index += 1) await guidance.add(`m${index}`);
    const kept = await guidance.list();
    expect(kept).toHaveLength(GUIDANCE_KEPT);
    expect(kept[0]?.text).toBe('m1');
  });
});
