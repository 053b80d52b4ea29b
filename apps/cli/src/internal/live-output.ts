import type { FeatureCounts, SessionEvent, SessionResult } from '@baton/session';

/** Where and how run output is written. */
export interface LiveOutputOptions {
  write: (text: string) => void;
  /** ANSI colours (only on a TTY, and never with NO_COLOR). */
  color: boolean;
}

const codes = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  cyan: [36, 39],
} as const;
type Style = keyof typeof codes;

/** Compact token counts: 950, 1.2k, 3.4M. */
export function formatTokens(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 1_000_000) return `${(count / 1_000).toFixed(1)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

export function formatUsd(value: number): string {
  return `$${value.toFixed(value < 1 ? 4 : 2)}`;
}

/** `[████░░░░░░] 2/5` */
export function featureBar(counts: FeatureCounts, width = 10): string {
  const filled = counts.total === 0 ? 0 : Math.round((counts.passing / counts.total) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${counts.passing}/${counts.total}`;
}

/** Turns session events into short human lines: session, turns, tool calls, features, tokens, cost. */
export function createLiveOutput(options: LiveOutputOptions) {
  const paint = (style: Style, text: string) =>
    options.color ? `\u001b[${codes[style][0]}m${text}\u001b[${codes[style][1]}m` : text;
  const line = (text: string) => options.write(`${text}\n`);

  function onEvent(event: SessionEvent): void {
    switch (event.type) {
      case 'session-start':
        line(
          paint('bold', `● session ${event.sessionNumber} (${event.kind})`) +
            paint(
              'dim',
              ` · project ${event.projectId} · model ${event.model}${event.interrupted ? ' · previous session was interrupted' : ''}`,
            ),
        );
        break;
      case 'turn':
        line(
          paint(
            'dim',
            `  turn ${event.turn}${event.phase === 'end' ? ' (end of session)' : ''} · ${event.stopReason} · in ${formatTokens(event.usage.inputTokens)} out ${formatTokens(event.usage.outputTokens)}`,
          ) +
            (event.clearedInputTokens > 0
              ? paint('cyan', ` · cleared ${formatTokens(event.clearedInputTokens)}`)
              : '') +
            paint('dim', ` · ${formatUsd(event.totals.costUsd)}`),
        );
        break;
      case 'tool-call':
        line(
          `    ${event.isError ? paint('red', '✗') : paint('green', '›')} ${event.tool === 'str_replace_based_edit_tool' ? 'editor' : event.tool} ${event.summary}`,
        );
        break;
      case 'api-retry':
        line(
          paint(
            'yellow',
            `  API ${event.status ?? 'connection'} error: retry ${event.attempt} in ${Math.round(event.delayMs)} ms`,
          ),
        );
        break;
      case 'memory-change':
        break;
      case 'session-end':
        line(sessionSummary(event.result, paint));
        break;
    }
  }
  return { onEvent, line, paint };
}

function sessionSummary(
  result: SessionResult,
  paint: (style: Style, text: string) => string,
): string {
  const good = result.outcome === 'completed';
  const mark = good
    ? paint('green', '✓')
    : result.outcome === 'cancelled' || result.outcome === 'budget_exhausted'
      ? paint('yellow', '■')
      : paint('red', '✗');
  const flipped =
    result.flippedFeatures.length > 0
      ? `flipped ${result.flippedFeatures.join(', ')}`
      : 'no feature flipped';
  const totals = `${result.turns} turns · in ${formatTokens(result.usage.inputTokens)} out ${formatTokens(result.usage.outputTokens)} · ${formatUsd(result.usage.costUsd)}`;
  const reason = good ? '' : `\n  ${result.reason}`;
  return `${mark} ${result.outcome} · ${flipped} · features ${featureBar(result.featuresAfter)} · ${totals}${reason}`;
}
