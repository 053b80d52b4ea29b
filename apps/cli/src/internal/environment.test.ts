import { describe, expect, it } from 'vitest';
import { unknownVariableWarnings } from './environment.js';

describe('unknownVariableWarnings', () => {
  const known = ['BATON_HOME', 'BATON_CONTEXT_PRESET', 'BATON_CONTEXT_CACHE_TTL', 'BATON_SANDBOX'];

  it('names the closest known variable for each unknown BATON_* one, and ignores the rest', () => {
    expect(
      unknownVariableWarnings(
        {
          BATON_HOME: '/x',
          BATON_CONTEXT_CACHE_TT: '1h',
          BATON_SANBOX: 'off',
          PATH: '/bin',
          BATONHOME: 'not ours',
        },
        known,
      ),
    ).toEqual([
      'unknown variable BATON_CONTEXT_CACHE_TT is ignored; did you mean BATON_CONTEXT_CACHE_TTL?',
      'unknown variable BATON_SANBOX is ignored; did you mean BATON_SANDBOX?',
    ]);
  });

  it('says nothing when every BATON_* variable is known', () => {
    expect(unknownVariableWarnings({ BATON_HOME: '/x', BATON_SANDBOX: 'on' }, known)).toEqual([]);
  });
});
