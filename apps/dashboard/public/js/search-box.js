// The search box on a project page: text across the project's memory files and session
// transcripts, through the same control call as `baton search`. Every hit is shown as text.
import { getJson, projectPath } from './api.js';
import { h, replace, submitHandler } from './dom.js';
import { sessionHref } from './session-page.js';

/** Longest text the search accepts (SEARCH_MAX_CHARACTERS in @baton/session). */
const MAX_CHARACTERS = 200;

/**
 * @param {string} projectId
 * @param {import('./api-types.js').SearchHit} hit
 */
function describeHit(projectId, hit) {
  if (hit.source === 'memory') {
    return h(
      'li',
      { dataset: { source: 'memory' } },
      h('span', { class: 'hit-where' }, `${hit.path}:${hit.line}`),
      ' ',
      h('span', { class: 'hit-snippet' }, hit.snippet),
    );
  }
  const block = hit.block === 'text' ? (hit.textSource ?? 'text') : hit.block.replace('_', ' ');
  return h(
    'li',
    { dataset: { source: 'transcript' } },
    h(
      'a',
      {
        class: 'hit-where',
        href: `${sessionHref(projectId, hit.sessionId)}#turn-${hit.turn}`,
      },
      `session ${hit.sessionNumber} · turn ${hit.turn} · ${hit.role} ${block}`,
    ),
    ' ',
    h('span', { class: 'hit-snippet' }, hit.snippet),
  );
}

/** @param {string} projectId */
export function searchBox(projectId) {
  const input = h('input', {
    type: 'search',
    name: 'q',
    maxlength: MAX_CHARACTERS,
    placeholder: 'Find text in memory and transcripts',
    dataset: { testid: 'search-text' },
  });
  const results = h('ol', { class: 'search-hits', dataset: { testid: 'search-hits' } });
  const message = h('p', { class: 'action-message', role: 'status' });
  const button = h('button', { type: 'submit', class: 'small' }, 'Search');
  return h(
    'div',
    {},
    h(
      'form',
      {
        class: 'search-box',
        role: 'search',
        on: {
          submit: submitHandler({ button, message, onError: () => replace(results) }, async () => {
            /** @type {import('./api-types.js').SearchAnswer} */
            const result = await getJson(`${projectPath(projectId)}/search`, { q: input.value });
            replace(results, ...result.hits.map((hit) => describeHit(projectId, hit)));
            replace(
              message,
              result.hits.length === 0
                ? `Nothing matches “${result.query}”.`
                : `${result.hits.length} hit${result.hits.length === 1 ? '' : 's'}${result.truncated ? ' (more not shown)' : ''}.`,
            );
          }),
        },
      },
      input,
      button,
    ),
    message,
    results,
  );
}
