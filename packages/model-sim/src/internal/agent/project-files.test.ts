import { describe, expect, it } from 'vitest';
import {
  buildFeatures,
  featuresFileText,
  featuresFromView,
  fileFromView,
  goalFeatures,
  insertLineAtEnd,
  passesSpan,
} from './project-files.js';

function view(path: string, text: string): string {
  const lines = text
    .split('\n')
    .map((line, index) => `${String(index + 1).padStart(6, ' ')}\t${line}`);
  return [`Here's the content of ${path} with line numbers:`, ...lines].join('\n');
}

describe('project files of the scripted agent', () => {
  it('turns goal bullets into features, and a goal without bullets into one', () => {
    expect(goalFeatures('Intro\n- one\n* two\n  - three ')).toEqual(['one', 'two', 'three']);
    expect(goalFeatures('\n  Just do it\nmore')).toEqual(['Just do it']);
    expect(buildFeatures('- a\n- b').map((feature) => feature.id)).toEqual(['F1', 'F2']);
  });

  it('reads a file back from a numbered view, and nothing from a cleared result', () => {
    expect(fileFromView(view('/memories/x', 'a\n\tb\n'))).toBe('a\n\tb\n');
    expect(fileFromView('[tool result cleared by context management]')).toBeUndefined();
    const features = buildFeatures('- a');
    expect(
      featuresFromView(view('/memories/features.json', featuresFileText(features)))?.features,
    ).toEqual(features);
    expect(featuresFromView(view('/memories/features.json', '{ not json'))).toBeUndefined();
  });

  it('finds a multi-line passes span that never reaches into the next feature', () => {
    const features = buildFeatures('- a\n- b');
    features[0]!.passes = true;
    const text = featuresFileText(features);
    expect(passesSpan(text, 'F1')).toBeUndefined();
    const span = passesSpan(text, 'F2');
    expect(span).toMatch(/^"id": "F2",\n[\s\S]*"passes": false$/);
    expect(text.split(span!).length).toBe(2);
  });

  it('inserts after the last line, not after a trailing newline', () => {
    expect(insertLineAtEnd('a\nb\n')).toBe(2);
    expect(insertLineAtEnd('a\nb')).toBe(2);
  });
});
