import { afterEach, expect, it, vi } from 'vitest';
import { requireCommands } from '../src/index.js';

const previous = process.env.CI;

afterEach(() => {
  if (previous === undefined) delete process.env.CI;
  else process.env.CI = previous;
  vi.restoreAllMocks();
});

it('passes when every program is on PATH', () => {
  process.env.CI = 'true';
  expect(() => requireCommands({ sh: 'dash', node: 'nodejs' })).not.toThrow();
});

it('under CI=true fails in one line naming the missing programs and their packages', () => {
  process.env.CI = 'true';
  expect(() =>
    requireCommands({ sh: 'dash', 'baton-no-such-tool': 'baton-tools', 'baton-no-cc': 'gcc' }),
  ).toThrow(
    /^missing on PATH: baton-no-such-tool, baton-no-cc: install with `apt-get install -y baton-tools gcc` \(or run `bash scripts\/test-prerequisites.sh`\)$/,
  );
});

it('outside CI warns the same line instead', () => {
  delete process.env.CI;
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  expect(() => requireCommands({ 'baton-no-such-tool': 'baton-tools' })).not.toThrow();
  expect(warn).toHaveBeenCalledWith(
    'missing on PATH: baton-no-such-tool: install with `apt-get install -y baton-tools` (or run `bash scripts/test-prerequisites.sh`)',
  );
});
