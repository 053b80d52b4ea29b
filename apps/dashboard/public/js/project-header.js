// The project page's header and stats: id, status, goal, features bar and actions, then the
// project's numbers and settings. Reads nothing itself: the project view and the stream's
// snapshot and `project` events hand it the project (GET /api/projects/:id, its stream).
import { currentSessionText, featuresBar, projectActions, statusBadge } from './components.js';
import { h, replace } from './dom.js';
import { formatAgo, formatHitRate, formatNumber, formatTokens, formatUsd } from './format.js';
import { shortCommit } from './session-table.js';

/** @typedef {import('./api-types.js').ProjectView} ProjectView */

/** @param {ProjectView} project */
function statEntries(project) {
  /** @type {Array<[string, string]>} */
  const entries = [
    ['Session', currentSessionText(project)],
    ['Sessions', formatNumber(project.sessions)],
    ['Last activity', formatAgo(project.lastActivityAt)],
    ['Tokens in', formatTokens(project.tokens.input)],
    ['Cache hit rate', formatHitRate(project.tokens.cacheRead, project.tokens.input)],
    [
      'Cache read / write',
      `${formatTokens(project.tokens.cacheRead)} / ${formatTokens(project.tokens.cacheWrite)}`,
    ],
    ['Tokens out', formatTokens(project.tokens.output)],
    ['Cleared', formatTokens(project.tokens.cleared)],
    ['USD', formatUsd(project.costUsd)],
    ['Repository', project.repo ?? 'none (Baton-owned, one BATON_HOME)'],
    ['Base', project.base === null ? '–' : `${project.base} ${shortCommit(project.baseCommit)}`],
    ['Branch', `${project.branch}${project.skipHooks ? ' (hooks skipped)' : ''}`],
    ['Checkpoint', project.lastCheckpoint === null ? '–' : shortCommit(project.lastCheckpoint)],
    ['Model', project.model ?? 'default'],
    ['Fallback model', project.fallbackModel ?? 'default'],
    ['Context', project.context.summary],
    ['Status reason', project.statusReason ?? '–'],
  ];
  entries.push(['Sandbox', project.sandbox.summary]);
  if (project.sandbox.allowedHosts.length > 0) {
    entries.push(['Allowed hosts', project.sandbox.allowedHosts.join(', ')]);
  }
  if (project.lastError) entries.push(['Last error', project.lastError]);
  return entries;
}

/**
 * The red line of a project paused because its last checkpoint is not on the branch: what git or
 * the remote refused, and the last checkpoint the branch does have. Empty otherwise.
 */
/** @param {ProjectView} project */
function checkpointFailureLine(project) {
  const failure = project.checkpointFailure;
  if (!failure) return [];
  return [
    h(
      'p',
      { class: 'checkpoint-failed', role: 'alert', dataset: { testid: 'checkpoint-failed' } },
      h('strong', {}, 'Checkpoint failed: the latest work is not on the branch. '),
      failure.reason,
      h(
        'span',
        { class: 'last-good', dataset: { testid: 'last-good-checkpoint' } },
        ` · last good checkpoint: ${failure.lastGood === null ? 'none yet' : shortCommit(failure.lastGood)}`,
        ' · fix the cause, then Resume.',
      ),
    ),
  ];
}

/**
 * createProjectHeader() -> { elements, show(project), showError(message) }: `show` renders the
 * project (the actions re-render it with the project they return); `showError` replaces the
 * header with one error line.
 */
export function createProjectHeader() {
  const header = h('div', { class: 'project-head' });
  const stats = h('dl', { class: 'stats' });

  // Live messages carry a goal excerpt; the page's first read (GET /api/projects/:id) the whole.
  /** @type {string | null} */
  let wholeGoal = null;

  /** @param {ProjectView | undefined} project */
  function show(project) {
    if (!project) return;
    if (!project.goalTruncated) wholeGoal = project.goal;
    const goal = project.goalTruncated && wholeGoal !== null ? wholeGoal : project.goal;
    replace(
      header,
      h(
        'div',
        {},
        h('h1', {}, project.id, ' ', statusBadge(project.status, project.statusReason)),
        h('p', { class: 'goal-full' }, goal),
        ...checkpointFailureLine(project),
      ),
      h(
        'div',
        { class: 'head-side' },
        featuresBar(project.features, project.id),
        projectActions(project, show),
      ),
    );
    replace(
      stats,
      statEntries(project).map(([term, value]) =>
        h(
          'div',
          // Commands that ran unsandboxed are a warning, not a detail.
          term === 'Sandbox' && project.sandbox.mode === 'off'
            ? { class: 'sandbox-off', 'data-sandbox': 'off' }
            : term === 'Sandbox'
              ? { 'data-sandbox': project.sandbox.mode ?? 'none' }
              : {},
          h('dt', {}, term),
          h('dd', {}, value),
        ),
      ),
    );
  }

  return {
    elements: [header, stats],
    show,
    showError: /** @param {string} message */ (message) =>
      replace(header, h('p', { class: 'error' }, message)),
  };
}
