import { svg } from './dom.js';
import { formatTokens } from './format.js';

/**
 * The stacked parts of a turn's input, bottom to top: field, class, label.
 * @type {Array<['cacheReadInputTokens' | 'cacheCreationInputTokens' | 'uncachedInputTokens', string, string]>}
 */
const PARTS = [
  ['cacheReadInputTokens', 'bar-read', 'read from cache'],
  ['cacheCreationInputTokens', 'bar-write', 'written to cache'],
  ['uncachedInputTokens', 'bar-uncached', 'uncached'],
];

/**
 * Input tokens per turn as an inline SVG chart: one stacked bar per turn (read from the prompt
 * cache, written to it, uncached) under a line of the total. Turns where context editing cleared
 * tokens get a marker and a dashed rule; session boundaries get a faint rule and the session
 * number.
 * @param {import('./api-types.js').TurnPoint[]} turns
 */
export function tokenChart(turns) {
  const width = 720;
  const height = 220;
  const pad = { left: 56, right: 16, top: 16, bottom: 28 };
  const root = svg('svg', {
    viewBox: `0 0 ${width} ${height}`,
    class: 'chart',
    role: 'img',
    'aria-label': 'Input tokens per turn',
    'data-testid': 'token-chart',
  });
  if (turns.length === 0) {
    root.append(
      svg(
        'text',
        { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'chart-empty' },
        'No turns yet',
      ),
    );
    return root;
  }
  const maxTokens = Math.max(1, ...turns.map((turn) => turn.inputTokens + turn.clearedInputTokens));
  const innerWidth = width - pad.left - pad.right;
  const innerHeight = height - pad.top - pad.bottom;
  /** @param {number} index */
  const x = (index) =>
    pad.left + (turns.length === 1 ? innerWidth / 2 : (index / (turns.length - 1)) * innerWidth);
  /** @param {number} value */
  const y = (value) => pad.top + innerHeight - (value / maxTokens) * innerHeight;

  for (const fraction of [0, 0.5, 1]) {
    const value = maxTokens * fraction;
    root.append(
      svg('line', {
        x1: pad.left,
        x2: width - pad.right,
        y1: y(value),
        y2: y(value),
        class: 'gridline',
      }),
      svg(
        'text',
        { x: pad.left - 6, y: y(value) + 4, 'text-anchor': 'end', class: 'axis' },
        formatTokens(Math.round(value)),
      ),
    );
  }
  /** @type {string | null} */
  let previousSession = null;

  turns.forEach((turn, index) => {
    if (turn.sessionId !== previousSession) {
      previousSession = turn.sessionId;
      root.append(
        svg('line', {
          x1: x(index),
          x2: x(index),
          y1: pad.top,
          y2: height - pad.bottom,
          class: 'session-rule',
        }),
        svg(
          'text',
          { x: x(index) + 3, y: height - pad.bottom + 14, class: 'axis' },
          turn.sessionNumber ? `S${turn.sessionNumber}` : 'S',
        ),
      );
    }
  });
  const barWidth = Math.max(1, Math.min(14, (innerWidth / turns.length) * 0.7));
  turns.forEach((turn, index) => {
    let base = 0;
    for (const [field, className, label] of PARTS) {
      const value = turn[field];
      if (value <= 0) continue;
      root.append(
        svg(
          'rect',
          {
            x: x(index) - barWidth / 2,
            y: y(base + value),
            width: barWidth,
            height: Math.max(0.5, y(base) - y(base + value)),
            class: className,
            'data-tokens': value,
          },
          svg(
            'title',
            {},
            `session ${turn.sessionNumber ?? '?'} turn ${turn.turn}: ${value} ${label}`,
          ),
        ),
      );
      base += value;
    }
  });
  const points = turns
    .map((turn, index) => `${x(index).toFixed(1)},${y(turn.inputTokens).toFixed(1)}`)
    .join(' ');
  root.append(svg('polyline', { points, class: 'line' }));
  turns.forEach((turn, index) => {
    const cleared = turn.clearedInputTokens > 0 || turn.edits.length > 0;
    const cache =
      turn.cacheReadInputTokens + turn.cacheCreationInputTokens > 0
        ? ` (${turn.cacheReadInputTokens} read from cache, ${turn.cacheCreationInputTokens} written)`
        : '';
    const title = `session ${turn.sessionNumber ?? '?'} turn ${turn.turn}: ${turn.inputTokens} input tokens${cache}${cleared ? `, ${turn.clearedInputTokens} cleared (${turn.edits.join(', ')})` : ''}`;
    if (cleared) {
      root.append(
        svg('line', {
          x1: x(index),
          x2: x(index),
          y1: y(turn.inputTokens + turn.clearedInputTokens),
          y2: y(turn.inputTokens),
          class: 'cleared-rule',
        }),
        svg(
          'circle',
          {
            cx: x(index),
            cy: y(turn.inputTokens),
            r: 5,
            class: 'cleared',
            'data-cleared': turn.clearedInputTokens,
          },
          svg('title', {}, title),
        ),
      );
    } else {
      root.append(
        svg(
          'circle',
          { cx: x(index), cy: y(turn.inputTokens), r: 2.5, class: 'point' },
          svg('title', {}, title),
        ),
      );
    }
  });
  return root;
}
