// Coalesces live updates: however many arrive between two frames, the page applies the latest
// one per key once, in the next animation frame. A burst of 500 status changes costs one DOM
// update, and the main thread stays free to answer clicks meanwhile.

/**
 * createFrameBatch((entries) => ...) returns { put(key, value), flush() }. `entries` is a Map of
 * key -> latest value, in first-put order.
 * @template K, V
 * @param {(entries: Map<K, V>) => void} apply
 */
export function createFrameBatch(apply) {
  /** @type {Map<K, V>} */
  let pending = new Map();
  let scheduled = false;

  function flush() {
    scheduled = false;
    if (pending.size === 0) return;
    const entries = pending;
    pending = new Map();
    apply(entries);
  }

  return {
    /**
     * @param {K} key
     * @param {V} value
     */
    put(key, value) {
      pending.set(key, value);
      if (scheduled) return;
      scheduled = true;
      // A hidden tab gets no frames: a timer keeps its state current for when it is shown.
      if (document.visibilityState === 'hidden') setTimeout(flush, 250);
      else requestAnimationFrame(flush);
    },
    flush,
  };
}
