import { describe, expect, it } from 'vitest';
import { checkChecklistWrite } from './checklist-rules.js';

const features = (overrides: Array<Partial<Record<string, unknown>>> = []) =>
  JSON.stringify(
    [
      { id: 'F1', description: 'Add a todo', steps: ['run add', 'see it listed'], passes: false },
      { id: 'F2', description: 'Remove a todo', steps: ['run remove'], passes: false },
    ].map((feature, index) => ({ ...feature, ...overrides[index] })),
    null,
    2,
  );

describe('the checklist may only flip passes', () => {
  it('allows the first creation of a valid checklist', () => {
    expect(checkChecklistWrite(null, features())).toBeNull();
  });

  it('allows flipping passes either way', () => {
    expect(checkChecklistWrite(features(), features([{ passes: true }]))).toBeNull();
    expect(checkChecklistWrite(features([{ passes: true }]), features())).toBeNull();
  });

  it('refuses removing a feature, naming it and the rule', () => {
    const before = features();
    const after = JSON.stringify(JSON.parse(before).slice(0, 1));
    const message = checkChecklistWrite(before, after);
    expect(message).toMatch(
      /^Refused: this write would remove feature F2\. Nothing was written\. Rule: /,
    );
    expect(message).toContain('only the "passes" field of a feature may change');
  });

  it('refuses changing an id, a description or steps', () => {
    expect(checkChecklistWrite(features(), features([{ id: 'X1' }]))).toContain(
      'remove feature F1',
    );
    expect(checkChecklistWrite(features(), features([{}, { description: 'Delete' }]))).toContain(
      'change the description of F2',
    );
    expect(checkChecklistWrite(features(), features([{ steps: ['run add'] }]))).toContain(
      'change the steps of F1',
    );
  });

  it('refuses reordering features', () => {
    const reordered = JSON.stringify(JSON.parse(features()).reverse());
    expect(checkChecklistWrite(features(), reordered)).toContain(
      'change the id of feature #1 from "F1" to "F2"',
    );
  });

  it('refuses additions after initialisation but allows them when asked', () => {
    const added = JSON.stringify([
      ...JSON.parse(features()),
      { id: 'F3', description: 'x', steps: [], passes: false },
    ]);
    expect(checkChecklistWrite(features(), added)).toContain('add feature F3 after initialisation');
    expect(checkChecklistWrite(features(), added, { allowAdditions: true })).toBeNull();
  });

  it('refuses invalid JSON and wrong shapes, also at creation', () => {
    expect(checkChecklistWrite(features(), features().slice(0, -3))).toContain(
      'the file is not valid JSON',
    );
    expect(checkChecklistWrite(null, '{"id":"F1"}')).toContain(
      'the top level must be a JSON array',
    );
    expect(
      checkChecklistWrite(null, '[{"id":"F1","description":"d","steps":"x","passes":"no"}]'),
    ).toContain(
      'feature #1 needs "steps" as an array of strings; feature #1 needs a boolean "passes"',
    );
    expect(
      checkChecklistWrite(
        null,
        '[{"id":"F1","description":"d","steps":[],"passes":false},{"id":"F1","description":"e","steps":[],"passes":false}]',
      ),
    ).toContain('repeats the id "F1"');
  });

  it('lets a broken checklist be repaired', () => {
    expect(checkChecklistWrite('[not json', features())).toBeNull();
  });
});

describe('a feature check is as fixed as its description', () => {
  const withCheck = (check: string | undefined, passes = false) =>
    JSON.stringify([{ id: 'F1', description: 'Add a todo', steps: ['run add'], check, passes }]);

  it('allows a first checklist whose features carry checks', () => {
    expect(checkChecklistWrite(null, withCheck('npm test -- add'))).toBeNull();
  });

  it('allows flipping passes of a feature that has a check', () => {
    expect(checkChecklistWrite(withCheck('npm test'), withCheck('npm test', true))).toBeNull();
  });

  it('refuses changing, removing or adding a check after the checklist was written', () => {
    expect(checkChecklistWrite(withCheck('npm test'), withCheck('true'))).toContain(
      'change the check of F1',
    );
    expect(checkChecklistWrite(withCheck('npm test'), withCheck(undefined))).toContain(
      'remove the check of F1',
    );
    expect(checkChecklistWrite(withCheck(undefined), withCheck('true'))).toContain(
      'add a check to F1 after it was written',
    );
  });

  it('refuses a check that is not a non-empty string, naming the feature', () => {
    const bad = JSON.stringify([
      { id: 'F1', description: 'd', steps: [], check: '  ', passes: false },
      { id: 'F2', description: 'd', steps: [], check: 42, passes: false },
    ]);
    const message = checkChecklistWrite(null, bad);
    expect(message).toContain('feature #1 has a "check" that is not a non-empty shell command');
    expect(message).toContain('feature #2 has a "check" that is not a non-empty shell command');
  });
});
