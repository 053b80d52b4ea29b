// The project page's feature checklist: `/memories/features.json` as a table, pass or fail and
// the session that flipped each row (GET /api/projects/:id/checklist).
import { getJson, projectPath } from './api.js';
import { h, replace } from './dom.js';

function checklistTable(view) {
  return h(
    'table',
    { class: 'features-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['ID', 'Feature', 'Result', 'Flipped in'].map((label) => h('th', {}, label)),
      ),
    ),
    h(
      'tbody',
      {},
      view.rows.map((row) =>
        h(
          'tr',
          { dataset: { feature: row.id, passes: row.passes } },
          h('td', {}, row.id),
          h('td', { title: row.steps.join('\n') }, row.description),
          h(
            'td',
            {},
            h(
              'span',
              { class: `badge ${row.passes ? 'pass' : 'fail'}` },
              row.passes ? 'pass' : 'fail',
            ),
          ),
          h('td', {}, row.flippedInSession ? `session ${row.flippedInSession}` : '–'),
        ),
      ),
    ),
  );
}

/** createChecklistPanel(projectId) -> { element, load() }: `load` fetches and shows the table. */
export function createChecklistPanel(projectId) {
  const element = h('div', { class: 'checklist' }, 'Loading…');

  async function load() {
    try {
      const view = await getJson(`${projectPath(projectId)}/checklist`);
      if (view.state !== 'ok') {
        replace(
          element,
          h(
            'p',
            { class: 'muted' },
            view.state === 'missing'
              ? 'features.json has not been written yet.'
              : 'features.json is not a valid checklist.',
          ),
        );
        return;
      }
      replace(
        element,
        h('p', { class: 'muted' }, `${view.passing} of ${view.total} features pass.`),
        checklistTable(view),
      );
    } catch (error) {
      replace(element, h('p', { class: 'error' }, error.message));
    }
  }

  return { element, load };
}
