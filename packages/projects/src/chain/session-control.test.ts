import { describe, expect, it } from 'vitest';
import { SessionControl } from './session-control.js';

describe('SessionControl', () => {
  it('keeps the first reason: an abort after a pause still aborts, a pause after an abort is ignored', () => {
    const paused = new SessionControl(undefined);
    paused.pause();
    expect(paused.pauseSignal.aborted).toBe(true);
    expect(paused.abortReason).toBe('paused');
    paused.abort('cancelled');
    expect(paused.signal.aborted).toBe(true);
    expect(paused.abortReason).toBe('cancelled');

    const aborted = new SessionControl(undefined);
    aborted.abort('shutdown');
    aborted.pause();
    aborted.abort('cancelled');
    expect(aborted.pauseSignal.aborted).toBe(false);
    expect(aborted.abortReason).toBe('shutdown');
  });

  it("maps the job signal's reason, anything unknown to cancelled, and is abandoned only on a lost lease or lock", () => {
    const cases: Array<[unknown, string, boolean]> = [
      ['shutdown', 'shutdown', false],
      ['lock_lost', 'lock_lost', true],
      [new Error('lease_lost'), 'lease_lost', true],
      ['something else', 'cancelled', false],
      [undefined, 'cancelled', false],
    ];
    for (const [reason, expected, abandoned] of cases) {
      const job = new AbortController();
      const control = new SessionControl(job.signal);
      job.abort(reason);
      expect(control.abortReason).toBe(expected);
      expect(control.abandoned).toBe(abandoned);
    }
  });

  it('follows a job signal aborted before it was created, and stops following after dispose', () => {
    const early = new AbortController();
    early.abort('shutdown');
    expect(new SessionControl(early.signal).abortReason).toBe('shutdown');

    const late = new AbortController();
    const control = new SessionControl(late.signal);
    control.dispose();
    late.abort('shutdown');
    expect(control.signal.aborted).toBe(false);
  });
});
