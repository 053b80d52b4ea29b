import { getJson, openStream, projectPath } from './api.js';
import { createEventList, describeDelivery } from './event-list.js';
import { createOlderButton } from './older-button.js';
import { createSessionTable, shortCommit } from './session-table.js';
import { tokenChart } from './chart.js';
import { currentSessionText, featuresBar, projectActions, statusBadge } from './components.js';
import { h, replace, setSanitizedHtml } from './dom.js';
import { guidanceBox } from './guidance-box.js';
import { searchBox } from './search-box.js';
import {
  formatAgo,
  formatDateTime,
  formatNumber,
  formatHitRate,
  formatTokens,
  formatUsd,
  usageInput,
} from './format.js';

function section(title, id, ...children) {
  return h(
    'section',
    { class: 'card', id, dataset: { testid: id } },
    h('h2', {}, title),
    ...children,
  );
}

/** Keeps 3 lines of context around changes; longer unchanged runs become one `skip` line. */
function collapseUnchanged(lines, context = 3) {
  const keep = lines.map((line) => line.op !== 'equal');
  const near = lines.map((_, index) => {
    for (let offset = -context; offset <= context; offset++) if (keep[index + offset]) return true;
    return false;
  });
  const result = [];
  let skipped = 0;
  lines.forEach((line, index) => {
    if (near[index]) {
      if (skipped > 0) result.push({ op: 'skip', count: skipped });
      skipped = 0;
      result.push(line);
    } else skipped++;
  });
  if (skipped > 0) result.push({ op: 'skip', count: skipped });
  return result;
}

export function projectPage(main, projectId) {
  let project = null;
  let turns = [];
  let selectedFile = null;

  const header = h('div', { class: 'project-head' });
  const stats = h('dl', { class: 'stats' });
  const checklist = h('div', { class: 'checklist' }, 'Loading…');
  const progress = h('div', { class: 'markdown', dataset: { testid: 'progress-log' } }, 'Loading…');
  const chart = h('div', { class: 'chart-box' });
  const files = h('ul', { class: 'files', dataset: { testid: 'memory-files' } });
  const fileView = h(
    'div',
    { class: 'file-view', dataset: { testid: 'memory-file' } },
    h('p', { class: 'muted' }, 'Pick a file.'),
  );
  const transitions = h('ol', { class: 'transitions' });
  // Each bounded panel shows its newest window and pages backwards on demand.
  const sessionTable = createSessionTable(projectId);
  const eventList = createEventList(projectId);
  const earlierTurns = createOlderButton('Earlier turns', 'earlier-turns', async (before) => {
    const page = await getJson(`${projectPath(projectId)}/tokens`, { before });
    turns = [...page.turns, ...turns];
    renderChart();
    return page.before;
  });
  const webhooks = h('ol', { class: 'webhooks', dataset: { testid: 'webhook-deliveries' } });

  /** The project branch against its base, fetched from the project's repository on request. */
  function branchDiff() {
    const output = h('pre', { class: 'branch-diff', dataset: { testid: 'branch-diff-text' } });
    const show = (stat) => async () => {
      replace(output, 'Fetching the branch…');
      try {
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
        replace(output, error.message);
      }
    };
    const stat = h('button', { type: 'button', dataset: { action: 'diff-stat' } }, 'Changed files');
    const full = h('button', { type: 'button', dataset: { action: 'diff-full' } }, 'Full diff');
    stat.addEventListener('click', show(true));
    full.addEventListener('click', show(false));
    return h('div', {}, h('div', { class: 'form-actions' }, stat, full), output);
  }

  replace(
    main,
    h(
      'div',
      { class: 'page project-page' },
      header,
      stats,
      h(
        'div',
        { class: 'grid' },
        section('Feature checklist', 'checklist', checklist),
        section('Progress log', 'progress', progress),
        section(
          'Input tokens per turn',
          'tokens',
          h(
            'p',
            { class: 'muted legend' },
            'Bars: input tokens read from the prompt cache (green), written to it (amber), uncached (blue); the line is the total. Orange markers: turns where context editing cleared input tokens (the dashed rule shows how many). Vertical rules: session starts.',
          ),
          chart,
          earlierTurns.element,
        ),
        section('Guidance for the agent', 'guidance', guidanceBox(projectId)),
        section('Search memory and transcripts', 'search', searchBox(projectId)),
        section('Sessions', 'sessions', ...sessionTable.elements),
        section('Branch diff against the base', 'branch-diff', branchDiff()),
        section('Live events', 'events', ...eventList.elements),
        section('Memory', 'memory', h('div', { class: 'memory' }, files, fileView)),
        section('Status history', 'transitions-card', transitions),
        section('Webhooks', 'webhooks-card', webhooks),
      ),
    ),
  );

  function renderHeader() {
    if (!project) return;
    replace(
      header,
      h(
        'div',
        {},
        h('h1', {}, project.id, ' ', statusBadge(project.status, project.statusReason)),
        h('p', { class: 'goal-full' }, project.goal),
      ),
      h(
        'div',
        { class: 'head-side' },
        featuresBar(project.features, project.id),
        projectActions(project, (updated) => {
          project = updated;
          renderHeader();
        }),
      ),
    );
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
    replace(
      stats,
      entries.map(([term, value]) =>
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

  function renderChart() {
    replace(chart, tokenChart(turns));
  }

  async function loadChecklist() {
    try {
      const view = await getJson(`${projectPath(projectId)}/checklist`);
      if (view.state !== 'ok') {
        replace(
          checklist,
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
        checklist,
        h('p', { class: 'muted' }, `${view.passing} of ${view.total} features pass.`),
        h(
          'table',
          { class: 'features-table' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ['ID', 'Feature', 'Result', 'Flipped in'].map((label) => h('th', {}, label)),
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
                h('td', {}, row.flippedInSession ? `session ${row.flippedInSession}` : '–'),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      replace(checklist, h('p', { class: 'error' }, error.message));
    }
  }

  async function loadProgress() {
    try {
      const result = await getJson(`${projectPath(projectId)}/progress`);
      if (!result.exists)
        replace(progress, h('p', { class: 'muted' }, 'progress.md has not been written yet.'));
      else setSanitizedHtml(progress, result.html);
    } catch (error) {
      replace(progress, h('p', { class: 'error' }, error.message));
    }
  }

  async function loadTokens() {
    try {
      const window = await getJson(`${projectPath(projectId)}/tokens`);
      turns = window.turns;
      earlierTurns.setCursor(window.before);
      renderChart();
    } catch (error) {
      replace(chart, h('p', { class: 'error' }, error.message));
    }
  }

  async function loadFiles() {
    try {
      const result = await getJson(`${projectPath(projectId)}/memory`);
      replace(
        files,
        result.files.map((file) =>
          h(
            'li',
            { class: file.kind },
            file.kind === 'file'
              ? h(
                  'button',
                  {
                    type: 'button',
                    class: `file-link${file.path === selectedFile ? ' on' : ''}`,
                    dataset: { path: file.path },
                    on: { click: () => openFile(file.path) },
                  },
                  file.path.replace(/^\/memories\//, ''),
                  h('span', { class: 'muted' }, ` ${formatNumber(file.size)} B`),
                )
              : h('span', { class: 'dir' }, `${file.path.replace(/^\/memories\//, '')}/`),
          ),
        ),
      );
      if (result.files.length === 0)
        replace(files, h('li', { class: 'muted' }, 'Memory is empty.'));
    } catch (error) {
      replace(files, h('li', { class: 'error' }, error.message));
    }
  }

  async function openFile(path) {
    selectedFile = path;
    for (const button of files.querySelectorAll('button.file-link'))
      button.classList.toggle('on', button.dataset.path === path);
    const base = projectPath(projectId);
    try {
      const [file, history] = await Promise.all([
        getJson(`${base}/memory/file`, { path }),
        getJson(`${base}/memory/history`, { path }),
      ]);
      const content = h('div', { class: 'file-content' });
      if (file.html !== null) setSanitizedHtml(content, file.html);
      else content.append(h('pre', {}, file.content));
      const diffBox = h('div', { class: 'diff', dataset: { testid: 'memory-diff' } });
      const versions = history.versions;
      const historyList = h(
        'ol',
        { class: 'history', dataset: { testid: 'memory-history' } },
        versions.map((version, index) => {
          const older = versions[index + 1];
          // Version ids are opaque strings; number them for people, oldest = v1.
          const number = versions.length - index;
          return h(
            'li',
            { dataset: { version: version.version } },
            h(
              'span',
              {},
              `v${number} · ${version.command} · ${formatNumber(version.bytes)} B · ${formatDateTime(version.at)}${version.session ? ` · session ${version.session.slice(0, 8)}` : ''}`,
            ),
            ' ',
            h(
              'button',
              {
                type: 'button',
                class: 'small',
                dataset: { diff: number },
                on: {
                  click: () =>
                    showDiff(
                      path,
                      older?.version,
                      version.version,
                      `v${number - 1}`,
                      `v${number}`,
                      diffBox,
                    ),
                },
              },
              older ? `diff vs v${number - 1}` : 'diff vs empty',
            ),
          );
        }),
      );
      replace(
        fileView,
        h('h3', {}, path, file.truncated ? ' (cut at 1 MiB)' : ''),
        content,
        h('h3', {}, 'History'),
        versions.length === 0
          ? h(
              'p',
              { class: 'muted' },
              history.supported
                ? 'No versions kept for this file.'
                : 'This store keeps no history.',
            )
          : historyList,
        diffBox,
      );
    } catch (error) {
      replace(fileView, h('p', { class: 'error' }, error.message));
    }
  }

  async function showDiff(path, from, to, fromLabel, toLabel, box) {
    try {
      const result = await getJson(`${projectPath(projectId)}/memory/diff`, { path, from, to });
      const diff = result.diff;
      const title = `${from === undefined ? 'empty' : fromLabel} → ${toLabel}`;
      if (diff.tooLarge) {
        replace(box, h('h4', {}, title), h('p', { class: 'diff-too-large' }, diff.message));
        return;
      }
      replace(
        box,
        h('h4', {}, `${title}: +${diff.added} −${diff.removed}`),
        h(
          'pre',
          { class: 'diff-lines' },
          collapseUnchanged(diff.lines).map((line) =>
            line.op === 'skip'
              ? h('span', { class: 'line skip' }, `⋯ ${line.count} unchanged lines\n`)
              : h(
                  'span',
                  { class: `line ${line.op}` },
                  `${line.op === 'insert' ? '+' : line.op === 'delete' ? '-' : ' '} ${line.text}\n`,
                ),
          ),
        ),
      );
    } catch (error) {
      replace(box, h('p', { class: 'error' }, error.message));
    }
  }

  async function loadDetail() {
    const detail = await getJson(projectPath(projectId));
    project = detail.project;
    renderHeader();
    sessionTable.showNewest(detail.sessions, detail.sessionsBefore);
    replace(
      transitions,
      detail.transitions.map((transition) =>
        h(
          'li',
          {},
          h('time', {}, formatDateTime(transition.at)),
          ` ${transition.from ?? '–'} → ${transition.to}`,
          transition.reason ? `: ${transition.reason}` : '',
        ),
      ),
    );
    const deliveries = detail.webhooks ?? [];
    replace(
      webhooks,
      deliveries.length === 0
        ? h('p', { class: 'muted' }, 'No webhook deliveries.')
        : deliveries.map((delivery) =>
            h(
              'li',
              { class: delivery.ok ? 'delivered' : 'failed' },
              h('time', {}, formatDateTime(delivery.at)),
              ` ${describeDelivery(delivery)}`,
            ),
          ),
    );
  }

  // Refreshing on the events that change each panel keeps Redis reads proportional to activity.
  let refreshTimer = null;
  const dirty = new Set();
  function markDirty(...parts) {
    for (const part of parts) dirty.add(part);
    if (refreshTimer !== null) return;
    refreshTimer = setTimeout(async () => {
      refreshTimer = null;
      const parts = [...dirty];
      dirty.clear();
      if (parts.includes('progress')) await loadProgress();
      if (parts.includes('checklist')) await loadChecklist();
      if (parts.includes('files')) await loadFiles();
      if (parts.includes('file') && selectedFile) await openFile(selectedFile);
      if (parts.includes('detail')) await loadDetail().catch(() => {});
    }, 250);
  }

  function onEvent(entry) {
    eventList.add(entry);
    const event = entry.event;
    if (event.type === 'turn') {
      const input = usageInput(event.usage);
      turns.push({
        sessionId: event.sessionId,
        sessionNumber: null,
        turn: event.turn,
        at: event.at,
        inputTokens: input.total,
        uncachedInputTokens: input.uncached,
        cacheReadInputTokens: input.read,
        cacheCreationInputTokens: input.write,
        outputTokens: event.usage.outputTokens,
        clearedInputTokens: event.clearedInputTokens,
        edits: event.appliedEdits.map((edit) => edit.type),
      });
      const known = turns.find(
        (turn) => turn.sessionId === event.sessionId && turn.sessionNumber !== null,
      );
      if (known) turns[turns.length - 1].sessionNumber = known.sessionNumber;
      renderChart();
    } else if (event.type === 'session-start') {
      loadTokens();
    } else if (event.type === 'memory-change') {
      const path = event.change.path;
      markDirty('files');
      if (path === '/memories/progress.md') markDirty('progress');
      if (path === '/memories/features.json') markDirty('checklist');
      if (path === selectedFile) markDirty('file');
    } else if (
      event.type === 'session-end' ||
      event.type === 'project-status' ||
      event.type === 'webhook-delivery'
    ) {
      markDirty('detail', 'checklist');
    }
  }

  loadDetail().catch((error) => replace(header, h('p', { class: 'error' }, error.message)));
  loadChecklist();
  loadProgress();
  loadTokens();
  loadFiles();

  openStream(`${projectPath(projectId)}/stream`, {
    snapshot(data) {
      project = data.project;
      renderHeader();
      sessionTable.showNewest(data.sessions, data.sessionsBefore);
      eventList.showSnapshot(data.events);
    },
    event: onEvent,
    project(data) {
      project = data;
      renderHeader();
    },
    removed() {
      replace(header, h('p', { class: 'error' }, `Project ${projectId} no longer exists.`));
    },
  });
}
