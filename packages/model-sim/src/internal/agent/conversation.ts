import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';

/**
 * Reads a conversation the way the scripted agent needs it: the session tag and goal from the
 * first user message, whether an end-of-session prompt arrived, and the agent's own earlier tool
 * calls with their results. The agent is stateless: everything comes from here.
 */

type SessionKind = 'init' | 'resume' | 'end';

interface SessionHeader {
  kind: SessionKind;
  project: string;
  session: number;
  interrupted: boolean;
}

interface ToolResultView {
  text: string;
  isError: boolean;
}

export interface Action {
  /** What the agent meant by the call (from its tool_use id, or inferred from the input). */
  step: string;
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** Undefined when no result followed (the conversation ends at this call). */
  result: ToolResultView | undefined;
  /** Whether the call happened after the end-of-session prompt. */
  inEndPhase: boolean;
}

/** A failing feature as the harness's orientation lists it. */
interface OrientedFeature {
  id: string;
  description: string;
  steps: string[];
  /** Its line in /memories/features.json. */
  line: number;
}

/** What the `<baton_orientation>` block of the first message says (format in docs/sessions.md). */
export interface Orientation {
  passing: number;
  total: number;
  next: OrientedFeature[];
  /** Lines of /memories/progress.md when the session started. */
  progressLines: number | undefined;
}

export interface Conversation {
  header: SessionHeader | undefined;
  /** The harness's orientation, when the first message carries one. */
  orientation: Orientation | undefined;
  goal: string | undefined;
  /** Reason of the `<baton_end_of_session>` prompt, if one arrived. */
  endReason: string | undefined;
  actions: Action[];
  /** The agent's own text blocks, oldest first (they survive context clearing). */
  narration: string[];
  /** Assistant messages so far (for unique tool_use ids). */
  assistantTurns: number;
  /** Text of the last user message. */
  lastUserText: string;
}

const SESSION_TAG = /<baton_session\s+([^>]*)>/;
const END_TAG = /<baton_end_of_session(?:\s+([^>]*))?>/;
const GOAL = /<goal>([\s\S]*?)<\/goal>/;
const ORIENTATION = /<baton_orientation>([\s\S]*?)<\/baton_orientation>/;
const SIM_TOOL_ID = /^toolu_sim_t\d+c\d+_([A-Za-z0-9-]+)$/;

function attributes(raw: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const match of raw.matchAll(/([a-zA-Z_]+)="([^"]*)"/g)) {
    const key = match[1];
    const value = match[2];
    if (key !== undefined && value !== undefined) out[key] = unescapeAttribute(value);
  }
  return out;
}

function unescapeAttribute(value: string): string {
  return value
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Text of a message: the string, or its text blocks (not tool results) joined. */
function messageText(message: BetaMessageParam): string {
  if (message.content === undefined) return '';
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((block) => (block.type === 'text' ? block.text : ''))
    .filter((text) => text.length > 0)
    .join('\n');
}

function toolResultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((block: unknown) =>
        typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'text'
          ? String((block as { text?: unknown }).text ?? '')
          : '',
      )
      .join('\n');
  }
  return '';
}

function parseHeader(text: string): SessionHeader | undefined {
  const match = SESSION_TAG.exec(text);
  if (!match?.[1]) return undefined;
  const attrs = attributes(match[1]);
  const kind = attrs['kind'];
  if (kind !== 'init' && kind !== 'resume' && kind !== 'end') return undefined;
  const session = Number.parseInt(attrs['session'] ?? '', 10);
  return {
    kind,
    project: attrs['project'] ?? 'project',
    session: Number.isFinite(session) && session > 0 ? session : 1,
    interrupted: attrs['interrupted'] === 'true',
  };
}

function parseOrientation(text: string): Orientation | undefined {
  const body = ORIENTATION.exec(text)?.[1];
  if (body === undefined) return undefined;
  const counts = /features\.json[^\n]*?: (\d+) of (\d+) pass/.exec(body);
  if (!counts) return undefined;
  const next: OrientedFeature[] = [];
  let listing = false;
  for (const line of body.split('\n')) {
    const feature = /^- ([A-Za-z0-9_-]+) \(features\.json line (\d+)\): (.*)$/.exec(line);
    if (!feature && !listing) continue;
    if (feature) {
      listing = true;
      next.push({
        id: feature[1]!,
        line: Number(feature[2]),
        description: feature[3] ?? '',
        steps: [],
      });
      continue;
    }
    const step = /^ {2}- (.*)$/.exec(line);
    // The list ends at the first line that is neither a feature nor one of its steps.
    if (!step) break;
    next[next.length - 1]!.steps.push(step[1] ?? '');
  }
  const progress = /progress\.md: (\d+) lines/.exec(body)?.[1];
  return {
    passing: Number(counts[1]),
    total: Number(counts[2]),
    next,
    progressLines: progress === undefined ? undefined : Number(progress),
  };
}

/** Which step a foreign tool call (not made by the simulator) most likely was. */
function inferStep(name: string, input: Record<string, unknown>): string {
  const command = typeof input['command'] === 'string' ? input['command'] : '';
  const path = typeof input['path'] === 'string' ? input['path'] : '';
  if (name === 'memory') {
    const file = path.replace(/^\/memories\/?/, '');
    if (command === 'view') {
      if (file === '') return 'view-root';
      if (file === 'features.json') return 'view-features';
      if (file === 'progress.md') return 'view-progress';
      if (file === 'startup.md') return 'view-startup';
    }
    return `memory-${command || 'other'}`;
  }
  return `${name}-${command || 'other'}`.replace(/[^A-Za-z0-9-]/g, '-');
}

export function parseConversation(messages: BetaMessageParam[]): Conversation {
  const first = messages.find((message) => message.role === 'user');
  const firstText = first ? messageText(first) : '';
  const header = parseHeader(firstText);
  const goalMatch = GOAL.exec(firstText);
  const goal = goalMatch?.[1]?.trim();

  let endReason: string | undefined;
  let endIndex = -1;
  messages.forEach((message, index) => {
    if (message.role !== 'user') return;
    const match = END_TAG.exec(messageText(message));
    if (match) {
      endIndex = index;
      endReason = attributes(match[1] ?? '')['reason'] ?? 'done';
    }
  });

  const results = new Map<string, ToolResultView>();
  for (const message of messages) {
    if (message.role !== 'user' || typeof message.content === 'string') continue;
    for (const block of message.content) {
      if (block.type === 'tool_result') {
        results.set(block.tool_use_id, {
          text: toolResultText(block.content),
          isError: block.is_error === true,
        });
      }
    }
  }

  const actions: Action[] = [];
  const narration: string[] = [];
  let assistantTurns = 0;
  messages.forEach((message, index) => {
    if (message.role !== 'assistant') return;
    assistantTurns += 1;
    if (typeof message.content === 'string') {
      narration.push(message.content);
      return;
    }
    for (const block of message.content) {
      if (block.type === 'text') narration.push(block.text);
      if (block.type !== 'tool_use') continue;
      const input =
        typeof block.input === 'object' && block.input !== null
          ? (block.input as Record<string, unknown>)
          : {};
      const step = SIM_TOOL_ID.exec(block.id)?.[1] ?? inferStep(block.name, input);
      actions.push({
        step,
        id: block.id,
        name: block.name,
        input,
        result: results.get(block.id),
        inEndPhase: endIndex >= 0 && index > endIndex,
      });
    }
  });

  const lastUser = [...messages].reverse().find((message) => message.role === 'user');
  return {
    header,
    orientation: parseOrientation(firstText),
    goal: goal && goal.length > 0 ? goal : undefined,
    endReason,
    actions,
    narration,
    assistantTurns,
    lastUserText: lastUser ? messageText(lastUser) : '',
  };
}
