// Coalesces refreshes: parts marked dirty within one delay are each reloaded once, in the order
// the steps are listed, so a burst of events costs one read per panel.

/**
 * createRefreshScheduler(steps, delay = 250) -> markDirty(...parts): `steps` is a list of
 * `[part, refresh]`; each `refresh` runs (awaited, one after another) when its part is dirty.
 * @template {string} Part
 * @param {ReadonlyArray<readonly [Part, () => unknown]>} steps
 * @param {number} [delay]
 * @returns {(...parts: Part[]) => void}
 */
export function createRefreshScheduler(steps, delay = 250) {
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  /** @type {Set<Part>} */
  const dirty = new Set();
  return function markDirty(...parts) {
    for (const part of parts) dirty.add(part);
    if (timer !== null || dirty.size === 0) return;
    timer = setTimeout(async () => {
      timer = null;
      const due = new Set(dirty);
      dirty.clear();
      for (const [part, refresh] of steps) if (due.has(part)) await refresh();
    }, delay);
  };
}
