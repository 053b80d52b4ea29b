import { errorMessage, getJson, openStream, projectPath } from './api.js';

import { createBranchDiffPanel } from './branch-diff-panel.js';
import { createChecklistPanel } from './checklist-panel.js';
import { h, replace } from './dom.js';
import { createEventList } from './event-list.js';
import { guidanceBox } from './guidance-box.js';
import { createMcpPanel } from './mcp-panel.js';
import { createMemoryFilesPanel } from './memory-files-panel.js';
import { createProgressPanel } from './progress-panel.js';
import { createProjectHeader } from './project-header.js';
import { createRefreshScheduler } from './refresh-scheduler.js';
import { searchBox } from './search-box.js';
import { createSessionTable } from './session-table.js';
import { createStatusHistory } from './status-history.js';
import { createTokenChartPanel } from './token-chart-panel.js';

/** @typedef {import('./api-types.js').ProjectEvent} ProjectEvent */
/** @typedef {'progress' | 'checklist' | 'files' | 'file' | 'detail'} Part */

/**
 * @param {string} title
 * @param {string} id
 * @param {...import('./dom.js').Child} children
 */
function section(title, id, ...children) {
  return h(
    'section',
    { class: 'card', id, dataset: { testid: id } },
    h('h2', {}, title),
    ...children,
  );
}

/**
 * The panels an event makes stale, for the refresh scheduler (turns and session starts aside).
 * @param {ProjectEvent} event
 * @param {(path: string) => boolean} isOpen
 * @returns {Part[]}
 */
function partsChangedBy(event, isOpen) {
  if (event.type === 'memory-change') {
    const path = event.change.path;
    /** @type {Part[]} */
    const parts = ['files'];
    if (path === '/memories/progress.md') parts.push('progress');
    if (path === '/memories/features.json') parts.push('checklist');
    if (isOpen(path)) parts.push('file');
    return parts;
  }
  // A check's result moves the checklist's badge (check-badges.js).
  if (['check-passed', 'check-failed', 'feature-regressed'].includes(event.type)) {
    return ['checklist'];
  }
  if (['session-end', 'project-status', 'webhook-delivery'].includes(event.type)) {
    return ['detail', 'checklist'];
  }
  return [];
}

/** The project page: each panel is its own module; this wires them to the view and the stream. */
/**
 * @param {HTMLElement} main
 * @param {string} projectId
 */
export function projectPage(main, projectId) {
  const header = createProjectHeader();
  const checklist = createChecklistPanel(projectId);
  const progress = createProgressPanel(projectId);
  const tokens = createTokenChartPanel(projectId);
  const sessionTable = createSessionTable(projectId);
  const eventList = createEventList(projectId);
  const memory = createMemoryFilesPanel(projectId);
  const history = createStatusHistory();
  const mcp = createMcpPanel();

  replace(
    main,
    h(
      'div',
      { class: 'page project-page' },
      ...header.elements,
      h(
        'div',
        { class: 'grid' },
        section('Feature checklist', 'checklist', checklist.element),
        section('Progress log', 'progress', progress.element),
        section('Input tokens per turn', 'tokens', ...tokens.elements),
        section('Guidance for the agent', 'guidance', guidanceBox(projectId)),
        section('Search memory and transcripts', 'search', searchBox(projectId)),
        section('Sessions', 'sessions', ...sessionTable.elements),
        section(
          'Branch diff against the base',
          'branch-diff',
          createBranchDiffPanel(projectId).element,
        ),
        section('Live events', 'events', ...eventList.elements),
        section('Memory', 'memory', memory.element),
        section('MCP servers', 'mcp', mcp.element),
        section('Status history', 'transitions-card', history.transitions),
        section('Webhooks', 'webhooks-card', history.webhooks),
      ),
    ),
  );

  async function loadDetail() {
    /** @type {import('./api-types.js').ProjectDetail} */
    const detail = await getJson(projectPath(projectId));
    header.show(detail.project);
    sessionTable.showNewest(detail.sessions, detail.sessionsBefore);
    history.show(detail);
    mcp.show(detail);
  }

  // Refreshing on the events that change each panel keeps Redis reads proportional to activity.
  /** @type {Array<[Part, () => unknown]>} */
  const steps = [
    ['progress', progress.load],
    ['checklist', checklist.load],
    ['files', memory.load],
    ['file', memory.reopen],
    ['detail', () => loadDetail().catch(() => {})],
  ];
  const markDirty = createRefreshScheduler(steps);

  /** @param {import('./api-types.js').EventEntry} entry */
  function onEvent(entry) {
    eventList.add(entry);
    const event = entry.event;
    if (event.type === 'mcp-server') mcp.addEvent(event);
    if (event.type === 'turn') tokens.addTurn(event);
    else if (event.type === 'session-start') tokens.load();
    else markDirty(...partsChangedBy(event, memory.isOpen));
  }

  loadDetail().catch((/** @type {unknown} */ error) => header.showError(errorMessage(error)));
  checklist.load();
  progress.load();
  tokens.load();
  memory.load();

  openStream(`${projectPath(projectId)}/stream`, {
    /** @param {import('./api-types.js').ProjectSnapshot} data */
    snapshot(data) {
      header.show(data.project);
      sessionTable.showNewest(data.sessions, data.sessionsBefore);
      eventList.showSnapshot(data.events);
      for (const entry of data.events ?? []) mcp.addEvent(entry.event);
      mcp.show({ project: data.project, sessions: data.sessions });
    },
    event: onEvent,
    project: header.show,
    removed: () => header.showError(`Project ${projectId} no longer exists.`),
  });
}
