import { describe, expect, it } from 'vitest';
import { featureBar, formatTokens, formatUsd } from './format.js';
import { fileProjectPaths } from '@baton/projects';
import { batonHome, deriveProjectId } from './project-home.js';

describe('numbers in live output stay short and readable', () => {
  it('formats tokens, cost and the features bar', () => {
    expect([formatTokens(950), formatTokens(1_234), formatTokens(3_400_000)]).toEqual([
      '950',
      '1.2k',
      '3.4M',
    ]);
    expect([formatUsd(0.01234), formatUsd(12.5)]).toEqual(['$0.0123', '$12.50']);
    expect(featureBar({ passing: 2, total: 5 })).toBe('[████░░░░░░] 2/5');
    expect(featureBar({ passing: 0, total: 0 })).toBe('[░░░░░░░░░░] 0/0');
  });
});

describe('projects live under BATON_HOME', () => {
  it('defaults to .baton in the current directory and honours BATON_HOME', () => {
    expect(batonHome({}, '/work')).toBe('/work/.baton');
    expect(batonHome({ BATON_HOME: 'state' }, '/work')).toBe('/work/state');
    expect(fileProjectPaths('/h', 'p1')).toEqual({
      dir: '/h/projects/p1',
      record: '/h/projects/p1/project.json',
      memories: '/h/projects/p1/memories',
      workspace: '/h/projects/p1/workspace',
      events: '/h/projects/p1/events.jsonl',
      sessions: '/h/projects/p1/sessions.jsonl',
      transitions: '/h/projects/p1/transitions.jsonl',
      transcripts: '/h/projects/p1/transcripts',
      checks: '/h/projects/p1/checks.json',
      guidance: '/h/projects/p1/guidance.jsonl',
      guidanceAcks: '/h/projects/p1/guidance-acks.jsonl',
    });
  });

  it('derives readable, unique, safe project ids', () => {
    expect(deriveProjectId('A small todo app!')).toMatch(/^a-small-todo-app-[0-9a-f]{4}$/);
    expect(deriveProjectId('../../etc')).toMatch(/^etc-[0-9a-f]{4}$/);
    expect(deriveProjectId('!!!')).toMatch(/^project-[0-9a-f]{4}$/);
    expect(deriveProjectId('x')).not.toBe(deriveProjectId('x'));
  });
});
