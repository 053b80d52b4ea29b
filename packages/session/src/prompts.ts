import { readFileSync } from 'node:fs';
import { SessionError } from './errors.js';
import { type OperatorGuidance, renderUnacknowledgedGuidance } from './guidance.js';

/** The prompt files kept in `packages/session/prompts/` (documented in docs/sessions.md). */
export type PromptName = 'system' | 'init' | 'resume' | 'end-of-session' | 'end-session';

const cache = new Map<PromptName, string>();

/**
 * Raw text of a prompt file. The files live next to `src/` and `dist/` in the package root, so
 * the same relative URL works from the sources (tests) and from the build (the CLI).
 */
export function loadPrompt(name: PromptName): string {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  let text: string;
  try {
    text = readFileSync(new URL(`../prompts/${name}.md`, import.meta.url), 'utf8');
  } catch (error) {
    throw new SessionError(
      'prompt_missing',
      `The prompt file ${name}.md is missing from @baton/session.`,
      {
        cause: error,
      },
    );
  }
  cache.set(name, text);
  return text;
}

/** Escape a value placed inside a double-quoted tag attribute. */
function escapeAttribute(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

/** Fill `{{name}}` placeholders; unknown placeholders are an error so a typo never reaches the model. */
function renderTemplate(template: string, values: Record<string, string>): string {
  return template.replace(/\{\{(\w+)\}\}/g, (_match, key: string) => {
    const value = values[key];
    if (value === undefined) {
      throw new SessionError('prompt_missing', `The prompt placeholder {{${key}}} has no value.`);
    }
    return value;
  });
}

/** The per-session values of a session's prompts. */
export interface PromptContext {
  projectId: string;
  goal: string;
  sessionNumber: number;
  interrupted: boolean;
}

const INTERRUPTED_NOTE =
  'Note: the previous session of this project was interrupted before it could finish (a crash, ' +
  'a cancellation or a timeout). Its last progress entry may be missing or incomplete: check the ' +
  'workspace (`git status`, `git log`) for half-done work before you pick a feature.';

function baseValues(context: PromptContext): Record<string, string> {
  return {
    project: escapeAttribute(context.projectId),
    session: String(context.sessionNumber),
    interrupted: context.interrupted ? 'true' : 'false',
    goal: context.goal.trim(),
  };
}

/**
 * The system prompt. It holds nothing that changes between sessions or projects, so the cached
 * prefix (tools + system) written by one session is read by every later one; per-session values
 * go in the first user message (`firstUserMessageSections`).
 */
export function renderSystemPrompt(): string {
  return loadPrompt('system').trim();
}

/** What a session's first user message is for. */
export type FirstMessageKind = 'init' | 'resume' | 'end';

/**
 * The sections of a session's first user message, in the order they are sent. Everything that
 * differs between sessions lives here, after the cached tools + system prefix. An empty section
 * is left out.
 */
export interface FirstUserMessageSections {
  /** `<baton_session kind=... project=... session=... interrupted=...>`: the simulator and the agent read it. */
  sessionTag: string;
  /** Set when the previous session was interrupted; else empty. */
  interruptedNote: string;
  /** What this kind of session does (the prompt file `init.md`, `resume.md` or `end-session.md`). */
  instructions: string;
  /** Baton's `<baton_orientation>` summary of the memory (orientation.ts); empty for init. */
  orientation: string;
  /** The project's goal in a `<goal>` tag; empty for closing sessions, which do no new work. */
  goal: string;
  /** Operator guidance (`baton say`) no earlier session acknowledged; else empty. */
  guidance: string;
  /** The end-of-session prompt when the message also closes the session; else empty. */
  closing: string;
}

/** What else shapes a first user message. */
export interface FirstMessageOptions {
  /** Appends the end-of-session prompt for this reason. */
  closingReason?: string;
  /** Operator guidance no earlier session acknowledged. */
  guidance?: readonly OperatorGuidance[];
  /** The orientation built from memory (`buildOrientation`); ignored for init. */
  orientation?: string;
}

const SECTION_ORDER: ReadonlyArray<keyof FirstUserMessageSections> = [
  'sessionTag',
  'interruptedNote',
  'instructions',
  'orientation',
  'goal',
  'guidance',
  'closing',
];

/**
 * The sections of the first user message of a session of `kind`. `closingReason` appends the
 * end-of-session prompt for that reason (a closing session, or a log closed from a fresh context).
 */
export function firstUserMessageSections(
  kind: FirstMessageKind,
  context: PromptContext,
  options: FirstMessageOptions = {},
): FirstUserMessageSections {
  const values = baseValues(context);
  const name: PromptName = kind === 'end' ? 'end-session' : kind;
  return {
    sessionTag: `<baton_session kind="${kind}" project="${values.project}" session="${values.session}" interrupted="${values.interrupted}">`,
    interruptedNote: context.interrupted ? INTERRUPTED_NOTE : '',
    instructions: renderTemplate(loadPrompt(name), values).trim(),
    orientation: kind === 'init' ? '' : (options.orientation ?? ''),
    goal: kind === 'end' ? '' : `<goal>\n${values.goal}\n</goal>`,
    guidance: renderUnacknowledgedGuidance(options.guidance ?? []),
    closing:
      options.closingReason === undefined
        ? ''
        : renderEndOfSessionPrompt(options.closingReason, context),
  };
}

/** Joins the sections in their fixed order, a blank line between two. */
export function renderFirstUserMessage(sections: FirstUserMessageSections): string {
  return SECTION_ORDER.map((key) => sections[key].trim())
    .filter((text) => text !== '')
    .join('\n\n');
}

/** The first user message of a session of the given kind. */
export function renderSessionPrompt(
  kind: FirstMessageKind,
  context: PromptContext,
  options: FirstMessageOptions = {},
): string {
  return renderFirstUserMessage(firstUserMessageSections(kind, context, options));
}

const REASON_TEXT: Record<string, string> = {
  done: 'the work of this session is done',
  max_turns: 'the turn budget is used up',
  max_input_tokens: 'the input-token budget is used up',
  max_output_tokens: 'the output-token budget is used up',
  max_usd: 'the cost budget is used up',
  wall_clock: 'the time budget is used up',
  cancelled: 'the session was cancelled',
  paused: 'the operator paused the project; a later session continues from your notes',
  context_window_exceeded: 'the context window is full',
  context_full:
    'your context window filled up; a new session with a fresh context continues from your notes',
  end_session: 'this is a closing session',
};

/** The end-of-session user message for a stop reason. */
export function renderEndOfSessionPrompt(reason: string, context: PromptContext): string {
  return renderTemplate(loadPrompt('end-of-session'), {
    ...baseValues(context),
    reason: escapeAttribute(reason),
    reasonText: REASON_TEXT[reason] ?? reason.replace(/_/g, ' '),
  }).trim();
}
