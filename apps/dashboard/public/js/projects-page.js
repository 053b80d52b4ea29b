import { getJson, openStream } from './api.js';
import {
  currentSessionText,
  featuresBar,
  projectActions,
  STATUSES,
  statusBadge,
} from './components.js';
import { h, replace } from './dom.js';
import { formatAgo, formatHitRate, formatTokens, formatUsd } from './format.js';

export function projectsPage(main) {
  const projects = new Map();
  const params = new URLSearchParams(window.location.search);
  const selected = new Set(
    (params.get('status') ?? '').split(',').filter((status) => STATUSES.includes(status)),
  );

  const filters = h('div', { class: 'filters', role: 'group', 'aria-label': 'Filter by status' });
  const summary = h('p', { class: 'summary' });
  let queue = null;
  const body = h('tbody');
  const empty = h(
    'p',
    { class: 'empty', hidden: true },
    'No projects yet. ',
    h('a', { href: '/new' }, 'Create one'),
    '.',
  );
  const table = h(
    'table',
    { class: 'projects', dataset: { testid: 'projects-table' } },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        [
          'Project',
          'Status',
          'Features',
          'Session',
          'Last activity',
          'Tokens in / out',
          'Cached',
          'Cleared',
          'USD',
          '',
        ].map((label) => h('th', {}, label)),
      ),
    ),
    body,
  );
  replace(
    main,
    h(
      'section',
      { class: 'page' },
      h('div', { class: 'page-head' }, h('h1', {}, 'Projects'), summary),
      filters,
      table,
      empty,
    ),
  );

  function renderFilters() {
    const counts = {};
    for (const project of projects.values())
      counts[project.status] = (counts[project.status] ?? 0) + 1;
    replace(
      filters,
      h(
        'button',
        {
          type: 'button',
          class: `chip${selected.size === 0 ? ' on' : ''}`,
          dataset: { status: 'all' },
          on: { click: () => toggle(null) },
        },
        `all ${projects.size}`,
      ),
      STATUSES.map((status) =>
        h(
          'button',
          {
            type: 'button',
            class: `chip status-${status}${selected.has(status) ? ' on' : ''}`,
            dataset: { status },
            on: { click: () => toggle(status) },
          },
          `${status} ${counts[status] ?? 0}`,
        ),
      ),
    );
  }

  function toggle(status) {
    if (status === null) selected.clear();
    else if (selected.has(status)) selected.delete(status);
    else selected.add(status);
    const url = new URL(window.location.href);
    if (selected.size === 0) url.searchParams.delete('status');
    else url.searchParams.set('status', [...selected].join(','));
    window.history.replaceState(null, '', url);
    render();
  }

  function row(project) {
    return h(
      'tr',
      { dataset: { project: project.id, status: project.status } },
      h(
        'td',
        {},
        h(
          'a',
          { href: `/projects/${encodeURIComponent(project.id)}`, class: 'project-link' },
          project.id,
        ),
        h('div', { class: 'goal', title: project.goal }, project.goal.split('\n')[0].slice(0, 120)),
      ),
      h('td', {}, statusBadge(project.status, project.statusReason)),
      h('td', {}, featuresBar(project.features, project.id)),
      h('td', { class: 'num' }, currentSessionText(project)),
      h(
        'td',
        { title: new Date(project.lastActivityAt).toISOString() },
        formatAgo(project.lastActivityAt),
      ),
      h(
        'td',
        { class: 'num' },
        `${formatTokens(project.tokens.input)} / ${formatTokens(project.tokens.output)}`,
      ),
      h(
        'td',
        { class: 'num', title: 'share of input tokens read from the prompt cache' },
        formatHitRate(project.tokens.cacheRead, project.tokens.input),
      ),
      h('td', { class: 'num' }, formatTokens(project.tokens.cleared)),
      h('td', { class: 'num' }, formatUsd(project.costUsd)),
      h(
        'td',
        {},
        projectActions(project, (updated) => update(updated)),
      ),
    );
  }

  function render() {
    const visible = [...projects.values()]
      .filter((project) => selected.size === 0 || selected.has(project.status))
      .sort((left, right) => right.createdAt - left.createdAt);
    replace(body, visible.map(row));
    empty.hidden = projects.size > 0;
    table.hidden = projects.size === 0;
    const running = [...projects.values()].filter((project) => project.status === 'running').length;
    const queueText = queue
      ? ` · queue: ${queue.waiting ?? 0} waiting, ${queue.active ?? 0} active, ${queue.delayed ?? 0} delayed`
      : '';
    replace(
      summary,
      `${projects.size} project${projects.size === 1 ? '' : 's'} · ${running} running${queueText}`,
    );
    renderFilters();
  }

  function update(project) {
    projects.set(project.id, project);
    render();
  }

  // Show the list at once, then follow the live stream.
  getJson('/api/projects')
    .then((result) => {
      for (const project of result.projects) projects.set(project.id, project);
      render();
    })
    .catch(() => {});
  openStream('/api/stream', {
    snapshot(data) {
      queue = data.queue;
      projects.clear();
      for (const project of data.projects) projects.set(project.id, project);
      render();
    },
    project: update,
    removed(data) {
      projects.delete(data.id);
      render();
    },
    queue(counts) {
      queue = counts;
      render();
    },
  });
  // Keep "x s ago" honest without a server round trip.
  setInterval(render, 15_000);
}
