// The project page's feature checklist: `/memories/features.json` as a table, pass or fail, the
// session that flipped each row (GET /api/projects/:id/checklist) and its check (check-badges.js).
import { errorMessage, getJson, projectPath } from './api.js';
import { checkCell, checkCounts, loadCheckReport } from './check-badges.js';
import { h, replace } from './dom.js';

/**
 * @param {string} projectId
 * @param {import('./api-types.js').ChecklistView} view
 * @param {import('./api-types.js').CheckReport | null} report
 */
function checklistTable(projectId, view, report) {
  return h(
    'table',
    { class: 'features-table' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['ID', 'Feature', 'Result', 'Check', 'Flipped in'].map((label) => h('th', {}, label)),
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
          checkCell(projectId, report, row.id),
          h('td', {}, row.flippedInSession ? `session ${row.flippedInSession}` : '–'),
        ),
      ),
    ),
  );
}

/**
 * createChecklistPanel(projectId) -> { element, load() }: `load` fetches and shows the table.
 * @param {string} projectId
 */
export function createChecklistPanel(projectId) {
  const element = h('div', { class: 'checklist' }, 'Loading…');

  async function load() {
    try {
      /** @type {Promise<import('./api-types.js').ChecklistView>} */
      const checklist = getJson(`${projectPath(projectId)}/checklist`);
      const [view, report] = await Promise.all([checklist, loadCheckReport(projectId)]);

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
        h(
          'p',
          { class: 'muted', dataset: { testid: 'check-counts' } },
          `${view.passing} of ${view.total} features pass.`,
          report === null ? null : ` ${checkCounts(report)}`,
        ),
        checklistTable(projectId, view, report),
      );
    } catch (error) {
      replace(element, h('p', { class: 'error' }, errorMessage(error)));
    }
  }

  return { element, load };
}
