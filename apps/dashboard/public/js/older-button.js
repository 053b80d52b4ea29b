// "Older …" paging for the project page's bounded panels: each panel loads its newest window
// and this button fetches the window before the oldest one shown, until there is none.
import { h } from './dom.js';

/**
 * createOlderButton(label, testid, load): `load(cursor)` fetches and shows the older window and
 * resolves with the next cursor (`null`: nothing older). `setCursor` after each newest window.
 * @template {string | number} Cursor
 * @param {string} label
 * @param {string} testid
 * @param {(cursor: Cursor) => Promise<Cursor | null>} load
 */
export function createOlderButton(label, testid, load) {
  /** @type {Cursor | null} */
  let cursor = null;
  const button = h(
    'button',
    { type: 'button', class: 'more', hidden: true, dataset: { testid } },
    label,
  );
  button.addEventListener('click', async () => {
    if (cursor === null) return;
    button.disabled = true;
    try {
      setCursor(await load(cursor));
    } finally {
      button.disabled = false;
    }
  });
  /** @param {Cursor | null | undefined} next */
  function setCursor(next) {
    cursor = next ?? null;
    button.hidden = cursor === null;
  }
  return { element: button, setCursor };
}
