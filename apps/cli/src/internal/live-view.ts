import type { ProjectEvent } from '@baton/projects/schema';
import { describeEvidence, type FeatureCounts } from '@baton/session';
import { featureBar, formatFileSize, formatHitRate, formatTokens, formatUsd } from './format.js';
import { terminalSafe } from './terminal-text.js';

/**
 * The live view shared by `baton run` and `baton logs -f`: one readable line per
 * event, and a status line with the current session and turn, the last tool calls, features
 * passing as a progress bar, tokens and USD. On a TTY the status line is redrawn in place under
 * the event lines; elsewhere it is printed as a plain line after each session ends, so piped
 * output stays append-only text. Colours only when asked (see `shouldUseColor`).
 */

/** Options of `createLiveView`. */
export interface LiveViewOptions {
  /** Where text goes (e.g. `process.stdout.write`). */
  write: (text: string) => void;
  /** ANSI colours. Default false. */
  color?: boolean;
  /** Redraw a status line in place (only on a TTY). Default false: status lines are plain lines. */
  statusLine?: boolean;
  /** Tool calls kept for the status line. Default 3. */
  recentToolCalls?: number;
  /** Prefix each event line with its local time (HH:MM:SS). Default true. */
  timestamps?: boolean;
  /** Terminal width: the in-place status line is cut to fit (a wrapped line cannot be redrawn). */
  columns?: number | undefined;
}

/** What the view knows after the events it has seen. */
interface LiveViewState {
  session: { number: number; kind: string } | null;
  turn: number;
  recentToolCalls: string[];
  features: FeatureCounts | null;
  /** Every input token: uncached + read from the prompt cache + written to it. */
  inputTokens: number;
  /** The part of `inputTokens` read from the prompt cache. */
  cacheReadInputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** Token counts as decoded events carry them (a turn's usage, session totals). */
interface TokenCounts {
  inputTokens: number;
  outputTokens: number;
  cacheReadInputTokens: number;
  cacheCreationInputTokens: number;
}

/** A usage record's input: uncached + cache reads + cache writes. */
function inputOf(usage: TokenCounts): number {
  return usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
}

/** `in 12.3k (94% cached) out 1.2k`. */
function tokensText(input: number, cacheRead: number, output: number): string {
  const cached = input > 0 && cacheRead > 0 ? ` (${formatHitRate(cacheRead, input)} cached)` : '';
  return `in ${formatTokens(input)}${cached} out ${formatTokens(output)}`;
}

export interface LiveView {
  /** Prints the event's line and updates the status. */
  onEvent(event: ProjectEvent): void;
  /** Start values (e.g. features from the project record) before any event. */
  seed(values: Partial<Pick<LiveViewState, 'features'>>): void;
  state(): LiveViewState;
  /** The status line's text (no colours, no newline). */
  statusText(): string;
  /** Prints a line above the status line. */
  line(text: string): void;
  /** Clears the in-place status line (call before exiting). */
  close(): void;
}

/**
 * `FORCE_COLOR` decides first, as in Node itself: `0`/`false` never, any other value always (also
 * into a pipe). Otherwise colours only on a TTY, never with `NO_COLOR` set (https://no-color.org)
 * or `TERM=dumb`.
 */
export function shouldUseColor(
  stream: { isTTY?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined) return !/^(0|false)$/i.test(force.trim());
  return (
    stream.isTTY === true &&
    (env.NO_COLOR === undefined || env.NO_COLOR === '') &&
    env.TERM !== 'dumb'
  );
}

const STYLES = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  magenta: [35, 39],
} as const;
type Style = keyof typeof STYLES;

const TOOL_NAMES: Record<string, string> = { str_replace_based_edit_tool: 'editor' };

function toolName(tool: string): string {
  return TOOL_NAMES[tool] ?? tool;
}

function clock(at: number): string {
  const date = new Date(at);
  return [date.getHours(), date.getMinutes(), date.getSeconds()]
    .map((part) => String(part).padStart(2, '0'))
    .join(':');
}

/** The first five names and a count: 30,000 left-out files must not flood the terminal. */
function shortList(names: readonly string[]): string {
  return names.length > 5
    ? `${names.slice(0, 5).join(', ')} and ${names.length - 5} more`
    : names.join(', ');
}

function formatBytes(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}

/** One readable line for an event (without time prefix or newline). `paint` adds colours. */
export function describeEvent(
  event: ProjectEvent,
  paint: (style: Style, value: string) => string = (_style, value) => value,
): string {
  switch (event.type) {
    case 'project-status': {
      const reason = event.reason ?? '';
      return paint(
        'magenta',
        `◆ project ${event.from ?? 'new'} → ${event.to}${reason === '' ? '' : ` (${reason})`}`,
      );
    }
    case 'session-queued':
      return paint(
        'dim',
        `  session ${event.sessionNumber} queued (${event.reason}${event.delayMs > 0 ? `, in ${(event.delayMs / 1000).toFixed(1)} s` : ''})`,
      );
    case 'session-claimed':
      return paint(
        'dim',
        `  session ${event.sessionNumber} claimed by worker ${event.workerId}${event.interrupted ? ' (previous session was interrupted)' : ''}`,
      );
    case 'session-interrupted':
      return paint(
        'yellow',
        `  ! session ${event.sessionNumber} was interrupted (its worker stopped); it will be resumed`,
      );
    case 'session-released':
      return paint(
        'dim',
        `  session ${event.sessionNumber} released by worker ${event.workerId} (${event.outcome})`,
      );
    case 'session-start':
      return (
        paint('bold', `● session ${event.sessionNumber} (${event.kind})`) +
        paint(
          'dim',
          ` · model ${event.model}${event.interrupted ? ' · previous session was interrupted' : ''}`,
        )
      );
    case 'turn': {
      const cleared = event.clearedInputTokens;
      return (
        paint(
          'dim',
          `  turn ${event.turn}${event.phase === 'end' ? ' (end of session)' : ''} · ${event.stopReason} · ${tokensText(inputOf(event.usage), event.usage.cacheReadInputTokens, event.usage.outputTokens)}`,
        ) +
        (cleared > 0 ? paint('cyan', ` · cleared ${formatTokens(cleared)}`) : '') +
        paint('dim', ` · ${formatUsd(event.totals.costUsd)}`)
      );
    }
    case 'tool-call':
      return (
        `    ${event.isError ? paint('red', '✗') : paint('green', '›')} ${toolName(event.tool)} ${event.summary}` +
        (event.limit === undefined ? '' : paint('red', ` · ${event.limit}`))
      );
    case 'memory-change': {
      const { change } = event;
      const target =
        change.newPath === undefined ? change.path : `${change.path} → ${change.newPath}`;
      return paint(
        'cyan',
        `    ✎ memory ${change.command} ${target}${change.command === 'delete' ? '' : ` (${formatBytes(change.bytes)})`}`,
      );
    }
    case 'api-retry':
      return paint(
        'yellow',
        `  API ${event.status ?? 'connection'} error: retry ${event.attempt} in ${Math.round(event.delayMs)} ms`,
      );
    case 'mcp-server':
      return paint(
        event.state === 'failed' ? 'yellow' : 'dim',
        `  MCP server ${event.server} (${event.source}, ${event.transport}): ${event.state}${event.tools.length > 0 ? ` · ${event.tools.length} tools` : ''}${event.message === undefined ? '' : ` · ${event.message}`}`,
      );
    case 'context-full': {
      const count =
        event.promptTokens === null
          ? ''
          : ` (${formatTokens(event.promptTokens)}${event.contextWindow === null ? '' : ` of ${formatTokens(event.contextWindow)}`} tokens)`;
      return paint(
        'yellow',
        `  context window full at turn ${event.turn}${count}: the session closes its log and the next one continues`,
      );
    }
    case 'empty-reply':
      return paint(
        'yellow',
        `  empty reply at turn ${event.turn}${event.nudged ? ': asked the model to continue' : ''}`,
      );
    case 'model-fallback':
      return paint(
        'yellow',
        `  ${event.from} stays overloaded: the session continues on ${event.to} from turn ${event.turn}`,
      );
    case 'session-end': {
      const { result } = event;
      const { outcome, usage } = result;
      // The session's work is not on the branch: never a green "completed".
      const lost =
        result.checkpointError !== undefined ||
        (result.checkpoint?.pushed === false && typeof result.checkpoint.head === 'string');
      const mark =
        outcome === 'completed' && !lost
          ? paint('green', '✓')
          : outcome === 'cancelled' || outcome === 'budget_exhausted'
            ? paint('yellow', '■')
            : paint('red', '✗');
      const flipped = result.flippedFeatures;
      const fellBack = result.fallback === undefined ? '' : ` · fell back to ${result.fallback.to}`;
      const failures = result.checkpointFailures ?? 0;
      const failed =
        failures === 0
          ? ''
          : paint(
              'red',
              ` · ${failures} checkpoint${failures === 1 ? '' : 's'} failed${lost ? ', the last one too' : ' (retried, saved later)'}`,
            );
      return `${mark} ${outcome} · ${flipped.length > 0 ? `flipped ${flipped.join(', ')}` : 'no feature flipped'} · features ${featureBar(result.featuresAfter)} · ${result.turns} turns${fellBack}${failed} · ${tokensText(inputOf(usage), usage.cacheReadInputTokens, usage.outputTokens)} · ${formatUsd(usage.costUsd)}${(outcome === 'completed' && !lost) || result.reason === '' ? '' : `\n  ${result.reason}`}`;
    }
    case 'checkpoint': {
      if (event.error !== undefined && event.commit === null && event.head === null) {
        // Nothing could be committed: the work is not on the branch (not "nothing new").
        return paint(
          'red',
          `  checkpoint (${event.reason}) failed: ${event.error} · the work is not saved yet; retried at the next checkpoint`,
        );
      }
      const saved =
        event.commit === null ? 'nothing new to commit' : `committed ${event.commit.slice(0, 12)}`;
      const pushed = event.pushed
        ? `pushed ${event.head?.slice(0, 12) ?? ''}`.trimEnd()
        : `not pushed${event.error === undefined ? '' : `: ${event.error}`}`;
      const hooks = event.hooks === 'none' ? '' : ` · hooks ${event.hooks}`;
      const shownSkipped = shortList(event.skipped);
      const skipped = event.skipped.length === 0 ? '' : ` · left out as secrets: ${shownSkipped}`;
      const large =
        event.tooLarge === undefined || event.tooLarge.length === 0
          ? ''
          : ` · left out as too large: ${shortList(event.tooLarge.map((file) => `${file.path} (${formatFileSize(file.bytes)})`))}`;
      const special =
        event.special === undefined || event.special.length === 0
          ? ''
          : ` · left out, git cannot store them: ${shortList(event.special.map((file) => `${file.path} (${file.kind})`))}`;
      const line = paint(
        event.pushed ? 'dim' : 'yellow',
        `  checkpoint (${event.reason}) · ${saved} · ${pushed}${hooks}${skipped}${large}${special}`,
      );
      const stale = event.replacedStale;
      if (stale === undefined) return line;
      // A warning of its own: commits a replaced session pushed late left the branch.
      return `${line}\n${paint(
        'yellow',
        `  ⚠ the branch held a late push of a replaced session (fence ${stale.fence}, ${stale.commits} commit${stale.commits === 1 ? '' : 's'}, ${stale.tip.slice(0, 12)}): kept on the branch ${stale.keptOn}, replaced by this session's checkpoint; merge what you need from it, then delete it`,
      )}`;
    }
    case 'workspace-prepared':
      return paint(
        'dim',
        `  workspace on ${event.branch} at ${event.head?.slice(0, 12) ?? 'its base'}${event.recovered ? ' (recovered unpushed work)' : ''}`,
      );
    case 'memory-snapshot': {
      const withheld =
        event.withheld.length === 0
          ? ''
          : ` · withheld ${event.withheld.map((file) => `${file.path} (${file.reason})`).join(', ')}`;
      if (event.error !== undefined) {
        return paint('yellow', `  memory snapshot not saved: ${event.error}${withheld}`);
      }
      return paint(
        withheld === '' ? 'dim' : 'yellow',
        `  memory snapshot ${event.commit?.slice(0, 12) ?? ''}${withheld}`,
      );
    }
    case 'guidance-sent':
      return paint('cyan', `  ✉ operator guidance queued: ${event.text}`);
    case 'guidance-delivered':
      return paint(
        'cyan',
        `  ✉ guidance delivered to the model with turn ${event.turn}${event.inFirstMessage ? ' (in the first message)' : ''}`,
      );
    case 'project-paused':
      return paint(
        'magenta',
        `◆ paused by the operator${event.runningSessionId === null ? '' : ': the running session ends after its end-of-session turn'}`,
      );
    case 'check-passed':
    case 'check-failed': {
      const { evidence } = event;
      const why = evidence.trigger === 'flip' ? 'before accepting the flip' : 're-run';
      return paint(
        evidence.passed ? 'green' : 'yellow',
        `    ${evidence.passed ? '✓' : '✗'} check of ${evidence.featureId} (${why}) ${describeEvidence(evidence)}`,
      );
    }
    case 'feature-regressed':
      return paint(
        'red',
        `  ✗ ${event.featureId} regressed: its check ${describeEvidence(event.evidence)}; set back to failing`,
      );
    case 'webhook-delivery':
      return paint(
        event.ok ? 'dim' : 'yellow',
        `  webhook ${event.webhookType} → ${event.target}: ${event.ok ? 'delivered' : `failed${event.error === undefined ? '' : ` (${event.error})`}`} after ${event.attempts} attempt${event.attempts === 1 ? '' : 's'}`,
      );
    case 'unknown': {
      const raw: unknown =
        typeof event.raw === 'object' && event.raw !== null && !Array.isArray(event.raw)
          ? (({ type: _type, at: _at, v: _v, projectId: _projectId, ...rest }) => rest)(
              event.raw as Record<string, unknown>,
            )
          : event.raw;
      return paint('yellow', `  ? ${event.problem} ${JSON.stringify(raw)}`);
    }
    default: {
      // Every decoded type has its line: a new event type does not compile until it has one.
      const unhandled: never = event;
      return paint('dim', `  ${JSON.stringify(unhandled)}`);
    }
  }
}

export function createLiveView(options: LiveViewOptions): LiveView {
  const color = options.color ?? false;
  const inPlace = options.statusLine ?? false;
  const keep = options.recentToolCalls ?? 3;
  const timestamps = options.timestamps ?? true;
  const paint = (style: Style, value: string) =>
    color ? `\u001b[${STYLES[style][0]}m${value}\u001b[${STYLES[style][1]}m` : value;

  const state: LiveViewState = {
    session: null,
    turn: 0,
    recentToolCalls: [],
    features: null,
    inputTokens: 0,
    cacheReadInputTokens: 0,
    outputTokens: 0,
    costUsd: 0,
  };
  // Totals of sessions that ended, plus the running session's own totals from its last turn.
  const ended = { inputTokens: 0, cacheReadInputTokens: 0, outputTokens: 0, costUsd: 0 };
  let statusShown = false;

  function clearStatus(): void {
    if (statusShown) options.write('\r\u001b[2K');
    statusShown = false;
  }

  function drawStatus(): void {
    if (!inPlace) return;
    const full = statusText();
    const width = Math.max(20, (options.columns ?? 80) - 1);
    options.write(
      paint('bold', [...full].length > width ? `${[...full].slice(0, width - 1).join('')}…` : full),
    );
    statusShown = true;
  }

  function statusText(): string {
    const parts: string[] = [];
    parts.push(
      state.session === null
        ? 'no session yet'
        : `session ${state.session.number} (${state.session.kind}) turn ${state.turn}`,
    );
    parts.push(`features ${featureBar(state.features ?? { passing: 0, total: 0 })}`);
    parts.push(
      `${tokensText(state.inputTokens, state.cacheReadInputTokens, state.outputTokens)} · ${formatUsd(state.costUsd)}`,
    );
    if (state.recentToolCalls.length > 0) parts.push(`last: ${state.recentToolCalls.join(', ')}`);
    return parts.join(' · ');
  }

  function line(value: string): void {
    clearStatus();
    options.write(`${value}\n`);
    drawStatus();
  }

  function update(event: ProjectEvent): boolean {
    switch (event.type) {
      case 'session-start':
        state.session = { number: event.sessionNumber, kind: event.kind };
        state.turn = 0;
        state.recentToolCalls = [];
        return false;
      case 'turn': {
        state.turn = event.turn;
        const { totals } = event;
        state.inputTokens = ended.inputTokens + inputOf(totals);
        state.cacheReadInputTokens = ended.cacheReadInputTokens + totals.cacheReadInputTokens;
        state.outputTokens = ended.outputTokens + totals.outputTokens;
        state.costUsd = ended.costUsd + totals.costUsd;
        return false;
      }
      case 'tool-call':
        state.recentToolCalls = [
          ...state.recentToolCalls,
          `${toolName(event.tool)} ${event.summary}`.slice(0, 60),
        ].slice(-keep);
        return false;
      case 'session-end': {
        const { result } = event;
        const { usage } = result;
        ended.inputTokens += inputOf(usage);
        ended.cacheReadInputTokens += usage.cacheReadInputTokens;
        ended.outputTokens += usage.outputTokens;
        ended.costUsd += usage.costUsd;
        state.inputTokens = ended.inputTokens;
        state.cacheReadInputTokens = ended.cacheReadInputTokens;
        state.outputTokens = ended.outputTokens;
        state.costUsd = ended.costUsd;
        state.features = result.featuresAfter;
        return true;
      }
      default:
        return false;
    }
  }

  return {
    onEvent(received) {
      // Model-written strings (commands, paths, reasons) are shown, never acted on.
      const event = terminalSafe(received);
      const sessionEnded = update(event);
      const prefix = timestamps ? `${paint('dim', clock(event.at))} ` : '';
      const description = describeEvent(event, paint);
      line(
        description
          .split('\n')
          .map((part, index) => (index === 0 ? prefix + part : part))
          .join('\n'),
      );
      if (sessionEnded && !inPlace) options.write(`${statusText()}\n`);
    },
    seed(values) {
      if (values.features !== undefined) state.features = values.features;
    },
    state: () => ({ ...state, recentToolCalls: [...state.recentToolCalls] }),
    statusText,
    line,
    close() {
      clearStatus();
    },
  };
}
