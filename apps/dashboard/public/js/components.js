import { errorMessage, postJson, projectPath } from './api.js';
import { h, replace } from './dom.js';

/** @typedef {import('./api-types.js').ProjectView} ProjectView */

/** @type {string[]} */
export const STATUSES = ['queued', 'running', 'paused', 'completed', 'failed', 'cancelled'];

/**
 * @param {string} status
 * @param {string | null} [reason]
 */
export function statusBadge(status, reason) {
  return h(
    'span',
    {
      class: `badge status-${STATUSES.includes(status) ? status : 'unknown'}`,
      title: reason ?? '',
    },
    status,
  );
}

/**
 * The features bar: a track with a fill whose width is passing/total.
 * @param {import('./api-types.js').FeatureCounts | null | undefined} features
 * @param {string} projectId
 */
export function featuresBar(features, projectId) {
  const passing = features?.passing ?? 0;
  const total = features?.total ?? 0;
  const fill = h('span', { class: 'bar-fill' });
  // CSSOM, not a style attribute: allowed by our CSP (style-src 'self').
  fill.style.width = total > 0 ? `${Math.round((passing / total) * 100)}%` : '0%';
  return h(
    'span',
    {
      class: `features${total > 0 && passing === total ? ' done' : ''}`,
      role: 'progressbar',
      'aria-valuemin': 0,
      'aria-valuemax': total,
      'aria-valuenow': passing,
      dataset: { testid: `features-${projectId}`, passing, total },
    },
    h('span', { class: 'bar' }, fill),
    h('span', { class: 'bar-label' }, total > 0 ? `${passing}/${total}` : 'no checklist yet'),
  );
}

const DONE_TEXT = { cancel: 'cancelled', pause: 'paused', resume: 'resumed' };

/**
 * Resume, pause and cancel buttons, shown when the action makes sense for the status.
 * @param {ProjectView} project
 * @param {(project: ProjectView) => void} [onDone]
 */
export function projectActions(project, onDone) {
  const container = h('span', { class: 'actions' });
  const message = h('span', { class: 'action-message', role: 'status' });
  /** @param {keyof typeof DONE_TEXT} verb */
  const act = (verb) => /** @param {Event} event */ async (event) => {
    event.preventDefault();
    // The listener is on the button.
    const button = /** @type {HTMLButtonElement} */ (event.currentTarget);
    if (verb === 'cancel' && !window.confirm(`Cancel project ${project.id}?`)) return;
    button.disabled = true;
    try {
      /** @type {import('./api-types.js').ProjectAnswer} */
      const result = await postJson(`${projectPath(project.id)}/${verb}`);
      replace(message, DONE_TEXT[verb]);
      onDone?.(result.project);
    } catch (error) {
      replace(message, errorMessage(error));
      message.classList.add('error');
    } finally {
      button.disabled = false;
    }
  };
  const canResume = ['paused', 'failed', 'cancelled'].includes(project.status);
  const canPause = ['queued', 'running'].includes(project.status);
  const canCancel = ['queued', 'running', 'paused'].includes(project.status);
  if (canResume) {
    container.append(
      h(
        'button',
        {
          type: 'button',
          class: 'small',
          dataset: { action: 'resume' },
          on: { click: act('resume') },
        },
        'Resume',
      ),
    );
  }
  if (canPause) {
    container.append(
      h(
        'button',
        {
          type: 'button',
          class: 'small',
          title: 'Stop after the current session writes its notes; resume continues it',
          dataset: { action: 'pause' },
          on: { click: act('pause') },
        },
        'Pause',
      ),
    );
  }
  if (canCancel) {
    container.append(
      h(
        'button',
        {
          type: 'button',
          class: 'small danger',
          dataset: { action: 'cancel' },
          on: { click: act('cancel') },
        },
        'Cancel',
      ),
    );
  }
  container.append(message);
  return container;
}

/** @param {ProjectView} project */
export function currentSessionText(project) {
  const current = project.currentSession;
  if (!current) return project.sessions > 0 ? `${project.sessions} done` : '–';
  return `#${current.number}${current.turn !== null && current.turn !== undefined ? ` · turn ${current.turn}` : ''}`;
}
