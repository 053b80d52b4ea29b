import { describe, expect, it } from 'vitest';
import { waitFor } from '../src/index.js';

describe('waitFor', () => {
  it('returns the first truthy value, polling until then', async () => {
    const answers = [undefined, null, false, { ready: 1 }, { ready: 2 }];
    let calls = 0;
    const value = await waitFor('the fourth answer', () => answers[calls++], 5_000, 1);
    expect(value).toEqual({ ready: 1 });
    expect(calls).toBe(4);
  });

  it('awaits an async check and keeps polling while the check throws', async () => {
    let calls = 0;
    const value = await waitFor(
      'a check that fails twice',
      async () => {
        calls += 1;
        if (calls < 3) throw new Error(`not yet (${calls})`);
        return `ok after ${calls}`;
      },
      5_000,
      1,
    );
    expect(value).toBe('ok after 3');
  });

  it('throws naming what it waited for when the condition never holds', async () => {
    const started = Date.now();
    await expect(waitFor('the moon to turn blue', () => false, 200, 10)).rejects.toThrow(
      /^timed out after 200 ms waiting for the moon to turn blue$/,
    );
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });

  it('names the last error the check threw and keeps it as the cause', async () => {
    let calls = 0;
    const failure = waitFor(
      'the service',
      () => {
        calls += 1;
        throw new Error(`refused (${calls})`);
      },
      100,
      10,
    );
    const error: unknown = await failure.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe(
      `timed out after 100 ms waiting for the service: Error: refused (${calls})`,
    );
    expect((error as Error).cause).toEqual(new Error(`refused (${calls})`));
  });
});
