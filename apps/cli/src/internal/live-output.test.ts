import { describe, expect, it } from 'vitest';
import { createLiveOutput, featureBar, formatTokens, formatUsd } from './live-output.js';
import { batonHome, deriveProjectId, projectPaths } from './project-home.js';

describe('live output stays short and readable', () => {
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

  it('colours only when asked', () => {
    const lines: string[] = [];
    const event = {
      v: 1,
      at: 0,
      projectId: 'p',
      sessionId: 's',
      type: 'tool-call',
      turn: 1,
      tool: 'bash',
      summary: 'ls',
      isError: true,
      durationMs: 3,
    } as const;
    createLiveOutput({ write: (text) => lines.push(text), color: false }).onEvent(event);
    createLiveOutput({ write: (text) => lines.push(text), color: true }).onEvent(event);
    expect(lines[0]).toBe('    ✗ bash ls\n');
    expect(lines[1]).toContain('\u001b[31m✗\u001b[39m');
  });
});

describe('projects live under BATON_HOME', () => {
  it('defaults to .baton in the current directory and honours BATON_HOME', () => {
    expect(batonHome({}, '/work')).toBe('/work/.baton');
    expect(batonHome({ BATON_HOME: 'state' }, '/work')).toBe('/work/state');
    expect(projectPaths('/h', 'p1')).toEqual({
      dir: '/h/projects/p1',
      record: '/h/projects/p1/project.json',
      memories: '/h/projects/p1/memories',
      workspace: '/h/projects/p1/workspace',
    });
  });

  it('derives readable, unique, safe project ids', () => {
    expect(deriveProjectId('A small todo app!')).toMatch(/^a-small-todo-app-[0-9a-f]{4}$/);
    expect(deriveProjectId('../../etc')).toMatch(/^etc-[0-9a-f]{4}$/);
    expect(deriveProjectId('!!!')).toMatch(/^project-[0-9a-f]{4}$/);
    expect(deriveProjectId('x')).not.toBe(deriveProjectId('x'));
  });
});
