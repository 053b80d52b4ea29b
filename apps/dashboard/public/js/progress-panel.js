// The project page's progress log: `/memories/progress.md` rendered as sanitized HTML
// (GET /api/projects/:id/progress).
import { errorMessage, getJson, projectPath } from './api.js';
import { h, replace, setSanitizedHtml } from './dom.js';

/**
 * createProgressPanel(projectId) -> { element, load() }: `load` fetches and shows the log.
 * @param {string} projectId
 */
export function createProgressPanel(projectId) {
  const element = h('div', { class: 'markdown', dataset: { testid: 'progress-log' } }, 'Loading…');

  async function load() {
    try {
      /** @type {import('./api-types.js').ProgressAnswer} */
      const result = await getJson(`${projectPath(projectId)}/progress`);
      if (!result.exists)
        replace(element, h('p', { class: 'muted' }, 'progress.md has not been written yet.'));
      else setSanitizedHtml(element, result.html);
    } catch (error) {
      replace(element, h('p', { class: 'error' }, errorMessage(error)));
    }
  }

  return { element, load };
}
