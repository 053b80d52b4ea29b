// One formatter each, built on first use: toLocaleString builds a new one per call (about 0.1 ms,
// 200 times per page), and building one loads locale data a page may not need.
/** @type {Intl.NumberFormat | null} */
let numberFormat = null;
/** @type {Intl.DateTimeFormat | null} */
let timeFormat = null;

/** @param {unknown} value */
export function formatNumber(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  numberFormat ??= new Intl.NumberFormat('en-US');
  return numberFormat.format(value);
}

/** @param {unknown} value */
export function formatTokens(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  if (value >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (value >= 10_000) return `${Math.round(value / 1_000)}k`;
  if (value >= 1_000) return `${(value / 1_000).toFixed(1)}k`;
  return String(value);
}

/**
 * Share of `total` input tokens read from the prompt cache, e.g. `94%`; `–` with no input.
 * @param {unknown} read
 * @param {unknown} total
 */
export function formatHitRate(read, total) {
  if (typeof total !== 'number' || !(total > 0) || typeof read !== 'number') return '–';
  return `${Math.round((read / total) * 100)}%`;
}

/**
 * A decoded usage record's input tokens: uncached + cache reads + cache writes. The server sends
 * every event decoded (`decodeProjectEvent`), so every count is a number.
 * @param {import('./api-types.js').TurnUsage} usage
 */
export function usageInput(usage) {
  const uncached = usage.inputTokens;
  const read = usage.cacheReadInputTokens;
  const write = usage.cacheCreationInputTokens;
  return { total: uncached + read + write, uncached, read, write };
}

/** @param {unknown} value */
export function formatUsd(value) {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '–';
  return value < 1 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** @param {unknown} ms */
export function formatDuration(ms) {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) return '–';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1_000;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/**
 * @param {unknown} at
 * @param {number} [now]
 */
export function formatAgo(at, now = Date.now()) {
  if (typeof at !== 'number' || at <= 0) return '–';
  const seconds = Math.max(0, Math.round((now - at) / 1_000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return new Date(at).toISOString().slice(0, 10);
}

/** @param {unknown} at */
export function formatTime(at) {
  if (typeof at !== 'number' || at <= 0) return '–';
  timeFormat ??= new Intl.DateTimeFormat('en-GB', {
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    hour12: false,
  });
  return timeFormat.format(at);
}

/** @param {unknown} at */
export function formatDateTime(at) {
  if (typeof at !== 'number' || at <= 0) return '–';
  return new Date(at).toISOString().replace('T', ' ').slice(0, 19);
}
