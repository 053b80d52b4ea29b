import type { FeatureCounts } from '@baton/session';

/** Compact token counts: 950, 1.2k, 3.4M. */
export function formatTokens(count: number): string {
  if (count < 1_000) return String(count);
  if (count < 1_000_000) return `${(count / 1_000).toFixed(1)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/** A file's size for a person: `2.0 KiB`, `300.0 MiB`. */
export function formatFileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

export function formatUsd(value: number): string {
  return `$${value.toFixed(value < 1 ? 4 : 2)}`;
}

/** Share of `total` input tokens read from the prompt cache: `94%`, or `-` with no input. */
export function formatHitRate(read: number, total: number): string {
  return total <= 0 ? '-' : `${Math.round((read / total) * 100)}%`;
}

/** `[████░░░░░░] 2/5` */
export function featureBar(counts: FeatureCounts, width = 10): string {
  const filled = counts.total === 0 ? 0 : Math.round((counts.passing / counts.total) * width);
  return `[${'█'.repeat(filled)}${'░'.repeat(width - filled)}] ${counts.passing}/${counts.total}`;
}
