import { describe, expect, it } from 'vitest';
import { buildUserTurn, noteBlock } from './user-turn.js';

const result = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'ok' });
const text = (value: string) => ({ type: 'text' as const, text: value });

describe('buildUserTurn: tool results first, notes after, nothing empty', () => {
  it('puts every tool_result before the notes, each group in the order queued', () => {
    expect(
      buildUserTurn([text('hook refused'), result('a'), text('guidance'), result('b')]),
    ).toEqual([result('a'), result('b'), text('hook refused'), text('guidance')]);
  });

  it('drops empty and whitespace-only text blocks, and leaves nothing to send when nothing is said', () => {
    expect(buildUserTurn([result('a'), text(''), text(' \n')])).toEqual([result('a')]);
    expect(buildUserTurn([text(''), text('  ')])).toEqual([]);
    expect(noteBlock('  ')).toEqual([]);
    expect(noteBlock('a note')).toEqual([text('a note')]);
  });
});
