// One row of the projects table, keyed by project id. `update` patches the cells whose content
// changed and leaves the row element (and every untouched cell) in place, so a live change
// neither rebuilds the table nor loses the row's focus or selection.
import { currentSessionText, featuresBar, projectActions, statusBadge } from './components.js';
import { h, replace } from './dom.js';
import { formatAgo, formatHitRate, formatTokens, formatUsd } from './format.js';

/** @typedef {import('./api-types.js').ProjectView} ProjectView */

/**
 * Each column: a signature of what it shows (to skip unchanged cells) and how to render it.
 * @type {Array<{ label: string, className?: string, title?: string, signature: (project: ProjectView) => string, render: (project: ProjectView, cell: HTMLTableCellElement, onAction: ((project: ProjectView) => void) | undefined) => import('./dom.js').Child }>}
 */
const COLUMNS = [
  {
    label: 'Project',
    signature: (project) => `${project.id}\n${project.goal}`,
    render: (project) => [
      h(
        'a',
        { href: `/projects/${encodeURIComponent(project.id)}`, class: 'project-link' },
        project.id,
      ),
      h(
        'div',
        { class: 'goal', title: project.goal },
        (project.goal.split('\n')[0] ?? '').slice(0, 120),
      ),
    ],
  },
  {
    label: 'Status',
    signature: (project) => `${project.status}\n${project.statusReason ?? ''}`,
    render: (project) => statusBadge(project.status, project.statusReason),
  },
  {
    label: 'Features',
    signature: (project) => `${project.features.passing}/${project.features.total}`,
    render: (project) => featuresBar(project.features, project.id),
  },
  {
    label: 'Session',
    className: 'num',
    signature: (project) => currentSessionText(project),
    render: (project) => currentSessionText(project),
  },
  {
    label: 'Last activity',
    className: 'ago',
    signature: (project) => `${project.lastActivityAt}\n${formatAgo(project.lastActivityAt)}`,
    render: (project, cell) => {
      cell.title = new Date(project.lastActivityAt).toISOString();
      return formatAgo(project.lastActivityAt);
    },
  },
  {
    label: 'Tokens in / out',
    className: 'num',
    signature: (project) => `${project.tokens.input}/${project.tokens.output}`,
    render: (project) =>
      `${formatTokens(project.tokens.input)} / ${formatTokens(project.tokens.output)}`,
  },
  {
    label: 'Cached',
    className: 'num',
    title: 'share of input tokens read from the prompt cache',
    signature: (project) => `${project.tokens.cacheRead}/${project.tokens.input}`,
    render: (project) => formatHitRate(project.tokens.cacheRead, project.tokens.input),
  },
  {
    label: 'Cleared',
    className: 'num',
    signature: (project) => String(project.tokens.cleared),
    render: (project) => formatTokens(project.tokens.cleared),
  },
  {
    label: 'USD',
    className: 'num',
    signature: (project) => String(project.costUsd),
    render: (project) => formatUsd(project.costUsd),
  },
  {
    label: '',
    signature: (project) => project.status,
    render: (project, _cell, onAction) => projectActions(project, onAction),
  },
];

export const PROJECT_COLUMNS = COLUMNS.map((column) => column.label);

/**
 * createProjectRow(project, onAction) -> { element, project, update(project) }.
 * @param {ProjectView} initial
 * @param {(project: ProjectView) => void} [onAction]
 */
export function createProjectRow(initial, onAction) {
  const cells = COLUMNS.map((column) => ({
    column,
    cell: h('td', { class: column.className, title: column.title }),
  }));
  /** @type {Array<string | null>} */
  const signatures = COLUMNS.map(() => null);
  const element = h(
    'tr',
    { dataset: { project: initial.id } },
    cells.map(({ cell }) => cell),
  );
  const row = {
    element,
    project: initial,
    /** @param {ProjectView} project */
    update(project) {
      row.project = project;
      element.dataset.status = project.status;
      cells.forEach(({ column, cell }, index) => {
        const signature = column.signature(project);
        if (signatures[index] === signature) return;
        signatures[index] = signature;
        replace(cell, column.render(project, cell, onAction));
      });
    },
  };

  row.update(initial);
  return row;
}
