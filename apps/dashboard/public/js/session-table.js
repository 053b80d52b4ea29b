// The project page's session table: the newest window of session summaries, older windows
// on demand (GET /api/projects/:id/sessions?before=), refreshed windows merged by session id.
import { getJson, projectPath } from './api.js';
import { h, replace } from './dom.js';
import { formatDuration, formatHitRate, formatNumber, formatTokens, formatUsd } from './format.js';
import { createOlderButton } from './older-button.js';
import { sessionHref } from './session-page.js';

/** @typedef {import('./api-types.js').SessionSummary} SessionSummary */

/**
 * Every input token of a session summary: uncached, read from the cache and written to it.
 * @param {SessionSummary} session
 */
function sessionInput(session) {
  return session.inputTokens + session.cacheReadInputTokens + session.cacheCreationInputTokens;
}

/**
 * The first 12 characters of a commit id, as git and `baton status` print them.
 * @param {string | null | undefined} commit
 */
export function shortCommit(commit) {
  return commit ? commit.slice(0, 12) : '–';
}

/**
 * A session's checkpoint trouble in red: its last checkpoint not committed or not pushed (git's
 * or the remote's words in the title), or how many of its checkpoints failed before a later one saved
 * the work. Empty when every checkpoint landed.
 * @param {SessionSummary} session
 */
function checkpointProblem(session) {
  const failures = session.checkpointFailures ?? 0;
  const [text, why] =
    session.checkpointError !== undefined
      ? ['checkpoint failed', session.checkpointError]
      : session.checkpoint && !session.checkpoint.pushed && session.checkpoint.head !== null
        ? ['checkpoint not pushed', session.checkpoint.error ?? 'unknown reason']
        : failures > 0
          ? [`${failures} checkpoint${failures === 1 ? '' : 's'} failed, saved by a later one`, '']
          : [null, ''];
  if (text === null) return '';
  // The whole refusal is in the project's red line and the title: the row stays one line.
  return h(
    'span',
    { class: 'checkpoint-failed', title: why, dataset: { testid: 'session-checkpoint-failed' } },
    ` · ${text}`,
  );
}

/**
 * Session summaries by id, oldest first: a refreshed newest window keeps older ones loaded.
 * @param {SessionSummary[]} older
 * @param {SessionSummary[]} newer
 */
function mergeSessions(older, newer) {
  /** @type {Map<string, SessionSummary>} */
  const byId = new Map();
  for (const session of [...older, ...newer]) byId.set(session.sessionId, session);
  return [...byId.values()].sort((left, right) => left.sessionNumber - right.sessionNumber);
}

/**
 * createSessionTable(projectId) -> { elements, showNewest(sessions, before) }: `showNewest` takes
 * the newest window (and the index before it) from the project view or the stream's snapshot.
 * @param {string} projectId
 */
export function createSessionTable(projectId) {
  /** @type {SessionSummary[]} */
  let sessions = [];
  /**
   * The sessions as last rendered (JSON), to skip rebuilding identical rows.
   * @type {string | null}
   */
  let shown = null;
  const timeline = h('div', { class: 'timeline' });
  const older = createOlderButton('Older sessions', 'older-sessions', async (before) => {
    /** @type {import('./api-types.js').SessionsPage} */
    const page = await getJson(`${projectPath(projectId)}/sessions`, { before });
    sessions = mergeSessions(page.sessions, sessions);
    render();
    return page.before;
  });

  function render() {
    shown = JSON.stringify(sessions);
    if (sessions.length === 0) {
      replace(timeline, h('p', { class: 'muted' }, 'No finished sessions yet.'));
      return;
    }
    const first = Math.min(...sessions.map((session) => session.startedAt));
    const last = Math.max(...sessions.map((session) => session.endedAt));
    const span = Math.max(1, last - first);
    const rows = sessions.map((session) => {
      const bar = h('span', { class: `span outcome-${session.outcome}` });
      bar.style.marginLeft = `${((session.startedAt - first) / span) * 100}%`;
      bar.style.width = `${Math.max(0.5, ((session.endedAt - session.startedAt) / span) * 100)}%`;
      return h(
        'tr',
        { dataset: { session: session.sessionId } },
        h(
          'td',
          { class: 'num' },
          h(
            'a',
            {
              href: sessionHref(projectId, session.sessionId),
              title: 'The conversation of this session',
              dataset: { testid: 'session-link' },
            },
            `#${session.sessionNumber}`,
          ),
        ),
        h(
          'td',
          {},
          session.kind,
          session.interrupted ? ' (resumed after crash)' : '',
          session.commits.length > 0
            ? h(
                'span',
                { class: 'commits', dataset: { testid: 'session-commits' } },
                ` · ${session.commits.map(shortCommit).join(' ')}`,
                session.checkpoint && !session.checkpoint.pushed ? ' (not pushed)' : '',
              )
            : '',
          checkpointProblem(session),
        ),
        h(
          'td',
          {},
          h(
            'span',
            { class: `badge outcome-${session.outcome}`, title: session.reason },
            session.outcome,
          ),
        ),
        h('td', { class: 'num' }, formatDuration(session.endedAt - session.startedAt)),
        h('td', { class: 'num' }, formatNumber(session.turns)),
        h(
          'td',
          { class: 'num' },
          `${formatTokens(sessionInput(session))} / ${formatTokens(session.outputTokens)}`,
        ),
        h(
          'td',
          { class: 'num' },
          formatHitRate(session.cacheReadInputTokens, sessionInput(session)),
        ),
        h('td', { class: 'num' }, formatTokens(session.clearedInputTokens)),
        h('td', { class: 'num' }, formatUsd(session.costUsd)),
        h(
          'td',
          { class: 'num' },
          `${session.featuresAfter.passing}/${session.featuresAfter.total}`,
        ),
        h('td', { class: 'span-cell' }, h('span', { class: 'track' }, bar)),
      );
    });
    replace(
      timeline,
      h(
        'table',
        { class: 'sessions' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            [
              '#',
              'Kind',
              'Outcome',
              'Duration',
              'Turns',
              'Tokens in / out',
              'Cached',
              'Cleared',
              'USD',
              'Features',
              'Timeline',
            ].map((label) => h('th', {}, label)),
          ),
        ),
        h('tbody', {}, rows),
      ),
    );
  }

  return {
    elements: [timeline, older.element],
    /**
     * @param {SessionSummary[]} newest
     * @param {number | null} before
     */
    showNewest(newest, before) {
      const pagedBack = sessions.length > newest.length;
      sessions = mergeSessions(sessions, newest);
      // Once older windows are shown, their cursor stays theirs.
      if (!pagedBack) older.setCursor(before);
      // The project view and the stream's snapshot both bring the newest window on opening:
      // the same rows are not built twice.
      if (JSON.stringify(sessions) !== shown) render();
    },
  };
}
