import { StoreError, type StoreLimits } from '../../store.js';

/** The usage a mutation would leave behind, checked against the limits before anything changes. */
export interface ProjectedUsage {
  /** Size of the file being written, in bytes. */
  fileBytes: number;
  /** Total bytes of all files after the mutation. */
  totalBytes: number;
  /** Number of files after the mutation. */
  files: number;
}

/**
 * Throws `quota_exceeded` if the state after a write would break a limit. Only writes and edits
 * are checked (deletes and renames never grow usage), so a store that is already over a lowered
 * limit can always be brought back under it by deleting.
 */
export function assertWithinLimits(limits: StoreLimits, projected: ProjectedUsage): void {
  if (limits.maxFileBytes !== undefined && projected.fileBytes > limits.maxFileBytes) {
    throw new StoreError(
      'quota_exceeded',
      `The file would be ${projected.fileBytes} bytes, over the limit of ${limits.maxFileBytes} bytes per file.`,
      { limit: 'maxFileBytes', maximum: limits.maxFileBytes },
    );
  }
  if (limits.maxTotalBytes !== undefined && projected.totalBytes > limits.maxTotalBytes) {
    throw new StoreError(
      'quota_exceeded',
      `The store would hold ${projected.totalBytes} bytes, over the limit of ${limits.maxTotalBytes} bytes.`,
      { limit: 'maxTotalBytes', maximum: limits.maxTotalBytes },
    );
  }
  if (limits.maxFiles !== undefined && projected.files > limits.maxFiles) {
    throw new StoreError(
      'quota_exceeded',
      `The store would hold ${projected.files} files, over the limit of ${limits.maxFiles} files.`,
      { limit: 'maxFiles', maximum: limits.maxFiles },
    );
  }
}

/** Rejects nonsense limits early (negative, fractional, NaN), so a typo does not silently disable one. */
export function validateLimits(limits: StoreLimits | undefined): StoreLimits {
  const result: StoreLimits = {};
  if (limits === undefined) return result;
  for (const key of ['maxFileBytes', 'maxTotalBytes', 'maxFiles'] as const) {
    const value = limits[key];
    // Infinity means unlimited, like undefined (the memory tool's limits use it that way).
    if (value === undefined || value === Number.POSITIVE_INFINITY) continue;
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new TypeError(
        `Store limit ${key} must be a non-negative integer or Infinity, got ${String(value)}.`,
      );
    }
    result[key] = value;
  }
  return result;
}
