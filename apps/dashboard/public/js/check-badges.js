// Verified progress in the checklist: each feature's check state as a badge (verified at a
// commit, claimed, regressed, refused, unverified, failing) and, on demand, the output tail of its
// last check run (GET /api/projects/:id/checks, then /checks/:feature for one tail).
import { errorMessage, getJson, projectPath } from './api.js';
import { h, replace } from './dom.js';

/** @typedef {import('./api-types.js').CheckReport} CheckReport */
/** @typedef {import('./api-types.js').CheckRow} CheckRow */
/** @typedef {import('./api-types.js').CheckEvidence} CheckEvidence */

/**
 * What each state says on its badge, and the badge's class.
 * @type {Record<CheckRow['state'], { label: string, tone: string }>}
 */
const STATES = {
  verified: { label: 'verified', tone: 'pass' },
  claimed: { label: 'claimed, unverified', tone: 'claimed' },
  regressed: { label: 'regressed', tone: 'fail' },
  refused: { label: 'claim refused', tone: 'fail' },
  unverified: { label: 'not checked yet', tone: 'claimed' },
  failing: { label: 'failing', tone: 'idle' },
};

/**
 * The project's check report, or `null` when it could not be read (the checklist still shows).
 * @param {string} projectId
 * @returns {Promise<CheckReport | null>}
 */
export async function loadCheckReport(projectId) {
  try {
    return await getJson(`${projectPath(projectId)}/checks`);
  } catch {
    return null;
  }
}

/**
 * One line on the report's counts, beside the checklist's "N of M pass".
 * @param {CheckReport | null} report
 */
export function checkCounts(report) {
  if (report === null) return null;
  const { verified, claimed, regressed } = report.counts;
  return `${verified} verified, ${claimed} claimed without a check, ${regressed} regressed.`;
}

/** @param {CheckEvidence} evidence */
function describeRun(evidence) {
  if (evidence.stopped === 'timeout') return 'timed out';
  if (evidence.stopped === 'not_started') return 'could not start';
  const seconds = (evidence.durationMs / 1000).toFixed(1);
  return `${evidence.passed ? 'passed' : 'failed'} (exit ${evidence.exitCode ?? '–'}, ${seconds} s)`;
}

/**
 * The badge text: a verified feature names the commit its check passed on.
 * @param {CheckRow} row
 */
function badgeText(row) {
  const state = STATES[row.state] ?? { label: row.state };
  const commit = row.evidence?.commit;
  if (row.state === 'verified' && commit) return `verified at ${commit.slice(0, 8)}`;
  return state.label;
}

/**
 * The output panel of one feature, filled when its button is pressed.
 * @param {string} projectId
 * @param {CheckRow} row
 */
function outputDetails(projectId, row) {
  const body = h('div', { class: 'check-output' });
  const details = h(
    'details',
    { class: 'check-details', dataset: { testid: `check-output-${row.id}` } },
    h('summary', {}, 'output'),
    body,
  );
  let loaded = false;
  details.addEventListener('toggle', async () => {
    if (!details.open || loaded) return;
    loaded = true;
    replace(body, 'Loading…');
    try {
      /** @type {CheckRow} */
      const full = await getJson(`${projectPath(projectId)}/checks/${encodeURIComponent(row.id)}`);
      const evidence = full.evidence;
      // Only a row with a run gets this panel; a row that lost it since shows this line.
      if (evidence === null) throw new Error('This check has not run yet.');

      replace(
        body,
        h('p', { class: 'muted' }, `$ ${evidence.command}`),
        h(
          'p',
          { class: 'muted' },
          `${describeRun(evidence)}, ${evidence.trigger === 'flip' ? 'when flipped' : 'in the re-run'}, ${new Date(evidence.at).toLocaleString()}`,
        ),
        h('pre', { class: 'check-tail' }, evidence.outputTail || '(no output)'),
      );
    } catch (error) {
      loaded = false;
      replace(body, h('p', { class: 'error' }, errorMessage(error)));
    }
  });
  return details;
}

/**
 * The checklist's "Check" cell of `featureId` from the report (`null`: no report).
 * @param {string} projectId
 * @param {CheckReport | null} report
 * @param {string} featureId
 */
export function checkCell(projectId, report, featureId) {
  if (report === null) return h('td', {}, '–');
  const row = report.features.find((feature) => feature.id === featureId);
  if (row === undefined) return h('td', {}, '–');
  const tone = STATES[row.state]?.tone ?? 'idle';
  const title =
    row.check === null
      ? 'No check: a flip is accepted on the model’s word'
      : row.evidence === null
        ? `$ ${row.check}`
        : `$ ${row.evidence.command}\n${describeRun(row.evidence)}`;
  return h(
    'td',
    { class: 'check-cell' },
    h(
      'span',
      {
        class: `badge check-${tone}`,
        title,
        dataset: { testid: `check-badge-${row.id}`, check: row.state },
      },
      badgeText(row),
    ),
    row.evidence === null ? null : outputDetails(projectId, row),
  );
}
