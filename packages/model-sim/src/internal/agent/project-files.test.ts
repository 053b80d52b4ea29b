import { describe, expect, it } from 'vitest';
import {
  MAX_WRITE_CHARS,
  PagedFile,
  buildFeatures,
  featuresFileParts,
  featuresFileText,
  featuresFromView,
  fileFromView,
  goalFeatures,
  insertLineAtEnd,
  pageFromView,
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

  it('writes one feature per line and finds a passes span that never reaches into the next feature', () => {
    const features = buildFeatures('- a\n- b');
    features[0]!.passes = true;
    const text = featuresFileText(features);
    expect(text.split('\n')).toHaveLength(5);
    expect(JSON.parse(text)).toEqual(features);
    expect(passesSpan(text, 'F1')).toBeUndefined();
    const span = passesSpan(text, 'F2');
    expect(span).toMatch(/^"id": "F2", [^\n]*"passes": false$/);
    expect(text.split(span!).length).toBe(2);
    // A pretty-printed checklist written by someone else still works.
    const pretty = JSON.stringify(features, null, 2);
    expect(passesSpan(pretty, 'F2')).toMatch(/^"id": "F2",\n[\s\S]*"passes": false$/);
  });

  it('splits a long checklist into parts that each fit one reply and add up to valid JSON', () => {
    const features = buildFeatures(
      Array.from({ length: 300 }, (_, index) => `- Feature ${index + 1}`).join('\n'),
    );
    const parts = featuresFileParts(features);
    expect(parts.appends.length).toBeGreaterThan(2);
    let text = parts.first;
    for (const part of [parts.first, ...parts.appends.map((append) => append.next)]) {
      expect(part.length).toBeLessThanOrEqual(MAX_WRITE_CHARS + 400);
    }
    for (const append of parts.appends) {
      expect(text.split(append.old)).toHaveLength(2);
      text = text.replace(append.old, append.next);
      expect(() => JSON.parse(text) as unknown).not.toThrow();
    }
    expect(text).toBe(featuresFileText(features));
  });

  it('assembles a file from cut pages, and knows when lines are still missing', () => {
    const lines = Array.from({ length: 10 }, (_, index) => `line ${index + 1}`);
    const header = "Here's the content of /memories/progress.md with line numbers:";
    const numbered = (from: number, to: number) =>
      lines
        .slice(from - 1, to)
        .map((line, index) => `${String(from + index).padStart(6)}\t${line}`);
    const first = pageFromView(
      [
        header,
        ...numbered(1, 4),
        '[Output cut at 16,000 characters: showing lines 1-4 of 10. To read on, view this file again with view_range [5, 8].]',
      ].join('\n'),
    );
    expect(first?.cut).toEqual({ next: 5, total: 10 });
    const file = new PagedFile();
    file.add(first!, true);
    expect(file.missingFrom()).toBe(5);
    expect(file.text()).toBeUndefined();
    file.add(pageFromView([header, ...numbered(5, 10)].join('\n'))!, true);
    expect(file.missingFrom()).toBeUndefined();
    expect(file.text()).toBe(lines.join('\n'));
    expect(pageFromView('[cleared to save context]')).toBeUndefined();
  });

  it('inserts after the last line, not after a trailing newline', () => {
    expect(insertLineAtEnd('a\nb\n')).toBe(2);
    expect(insertLineAtEnd('a\nb')).toBe(2);
  });
});
