import { describe, expect, it } from 'vitest';
import {
  firstUserMessageSections,
  renderEndOfSessionPrompt,
  renderFirstUserMessage,
  renderSessionPrompt,
  renderSystemPrompt,
} from './prompts.js';

const context = {
  projectId: 'todo "app"',
  goal: 'A todo app.\n- Add\n- List',
  sessionNumber: 3,
  interrupted: false,
};

describe('prompts carry the tags the simulator and the agent rely on', () => {
  it('init starts with the session tag and holds the goal', () => {
    const text = renderSessionPrompt('init', context);
    expect(text.split('\n')[0]).toBe(
      '<baton_session kind="init" project="todo &quot;app&quot;" session="3" interrupted="false">',
    );
    expect(text).toContain('<goal>\nA todo app.\n- Add\n- List\n</goal>');
    for (const file of ['/memories/features.json', '/memories/progress.md', '/memories/startup.md'])
      expect(text).toContain(file);
  });

  it('init asks for a check per feature and says what makes a good one', () => {
    // Whitespace-insensitive: the prompt file wraps its lines.
    const text = renderSessionPrompt('init', context).replace(/\s+/g, ' ');
    for (const phrase of [
      'Give every feature you can a `"check"`',
      'exits 0 only when the feature works',
      'Baton runs it before it accepts `"passes": true`',
      'fast (seconds), deterministic, needs no network unless the project allows it',
      'tests the behaviour, not that a file exists',
      'A check cannot be changed later',
    ]) {
      expect(text).toContain(phrase);
    }
  });

  it('resume points at the orientation and memory, and says when the previous session was interrupted', () => {
    const plain = renderSessionPrompt('resume', context, {
      orientation: '<baton_orientation>\nsummary-marker\n</baton_orientation>',
    });
    expect(plain.split('\n')[0]).toBe(
      '<baton_session kind="resume" project="todo &quot;app&quot;" session="3" interrupted="false">',
    );
    expect(plain).toContain('Read what you need');
    // The orientation sits after the instructions and before the goal, in the first message.
    expect(plain.indexOf('summary-marker')).toBeGreaterThan(plain.indexOf('Read what you need'));
    expect(plain.indexOf('summary-marker')).toBeLessThan(plain.indexOf('<goal>'));
    expect(renderSessionPrompt('init', context, { orientation: 'x-orientation' })).not.toContain(
      'x-orientation',
    );
    expect(plain).not.toContain('interrupted before it could finish');
    const interrupted = renderSessionPrompt('resume', { ...context, interrupted: true });
    expect(interrupted).toContain('interrupted="true"');
    expect(interrupted).toContain(
      'the previous session of this project was interrupted before it could finish',
    );
  });

  it('the end-of-session prompt names the reason and the progress log', () => {
    const text = renderEndOfSessionPrompt('max_usd', context);
    expect(text.split('\n')[0]).toBe('<baton_end_of_session reason="max_usd">');
    expect(text).toContain('the cost budget is used up');
    expect(text).toContain('"Session 3 end"');
    expect(renderSessionPrompt('end', context)).toContain('<baton_session kind="end"');
  });

  it('the system prompt states the memory layout and the one-feature rule', () => {
    const text = renderSystemPrompt();
    expect(text).toContain('Work on one feature at a time.');
    expect(text).not.toMatch(/\{\{/);
  });

  it('the system prompt carries no per-session value, so every session shares the cached prefix', () => {
    const text = renderSystemPrompt();
    expect(text).not.toContain('todo');
    expect(text).not.toMatch(/session \d/i);
    // Every per-session value is in the first user message instead.
    const first = renderSessionPrompt('resume', { ...context, interrupted: true });
    expect(first).toContain('project="todo &quot;app&quot;" session="3" interrupted="true"');
  });

  it('the first user message is its named sections in a fixed order', () => {
    const sections = firstUserMessageSections(
      'resume',
      { ...context, interrupted: true },
      { closingReason: 'max_turns' },
    );
    const text = renderFirstUserMessage(sections);
    const order = [
      sections.sessionTag,
      sections.interruptedNote,
      sections.instructions,
      sections.goal,
      sections.closing,
    ].map((section) => text.indexOf(section));
    expect(order.every((position) => position >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(renderFirstUserMessage({ ...sections, interruptedNote: '', closing: '' })).toBe(
      [sections.sessionTag, sections.instructions, sections.goal].join('\n\n'),
    );
    expect(firstUserMessageSections('end', context).goal).toBe('');
  });
});
