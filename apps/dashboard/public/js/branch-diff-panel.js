// The project page's branch diff: the project branch against its base, fetched from the
// project's repository only when asked (GET /api/projects/:id/diff?stat=1|0).
import { errorMessage, getJson, projectPath } from './api.js';
import { h, replace } from './dom.js';

/**
 * createBranchDiffPanel(projectId) -> { element }: two buttons and the text they fetch.
 * @param {string} projectId
 */
export function createBranchDiffPanel(projectId) {
  const output = h('pre', { class: 'branch-diff', dataset: { testid: 'branch-diff-text' } });
  /** @param {boolean} stat */
  const show = (stat) => async () => {
    replace(output, 'Fetching the branch…');
    try {
      /** @type {import('./api-types.js').BranchDiff} */
      const diff = await getJson(`${projectPath(projectId)}/diff`, { stat: stat ? 1 : 0 });
      if (diff.head === null) {
        replace(output, `${diff.branch} has no checkpoint yet.`);
        return;
      }
      const header = `${diff.branch} ${diff.head.slice(0, 12)} against ${diff.base ?? 'the empty tree'} ${diff.baseCommit ? diff.baseCommit.slice(0, 12) : ''}: ${diff.commits.length} commits\n\n`;
      replace(
        output,
        `${header}${diff.text}${diff.truncated ? '\n… (cut: too long to show)' : ''}`,
      );
    } catch (error) {
      replace(output, errorMessage(error));
    }
  };
  const stat = h('button', { type: 'button', dataset: { action: 'diff-stat' } }, 'Changed files');
  const full = h('button', { type: 'button', dataset: { action: 'diff-full' } }, 'Full diff');
  stat.addEventListener('click', show(true));
  full.addEventListener('click', show(false));
  return { element: h('div', {}, h('div', { class: 'form-actions' }, stat, full), output) };
}
