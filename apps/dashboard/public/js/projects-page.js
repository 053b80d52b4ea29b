// The projects page at fleet scale: the server pages, sorts, filters and counts (GET
// /api/projects); the page shows one window of rows keyed by project id and follows the live
// stream, patching rows in place at most once per animation frame.
import { getJson, openStream } from './api.js';
import { STATUSES } from './components.js';
import { h, replace } from './dom.js';
import { createFrameBatch } from './frame-batch.js';
import { createProjectRow, PROJECT_COLUMNS } from './project-row.js';

/** @typedef {import('./api-types.js').ProjectView} ProjectView */
/** @typedef {Partial<Record<string, number>>} StatusCounts */
/** @typedef {{ statuses: Set<string>, search: string }} Query */
/**
 * The latest live news of one project: its view and the change-feed version it is at (`-1`: from
 * an action's answer), or that it was removed.
 * @typedef {{ project: ProjectView, version: number, removed?: undefined } | { removed: true }} LiveMessage
 */
/** @typedef {ReturnType<typeof createProjectRow>} ProjectRow */

const PAGE_SIZE = 50;
/** Marker lines shown above the rows; `baton status` lists every one. */
const MAX_PROBLEM_LINES = 10;
const SEARCH_DELAY_MS = 250;

/**
 * The filter as the URL keeps it: `?status=a,b&q=text`.
 * @returns {Query}
 */
function readQuery() {
  const params = new URLSearchParams(window.location.search);
  return {
    statuses: new Set(
      (params.get('status') ?? '').split(',').filter((status) => STATUSES.includes(status)),
    ),
    search: params.get('q') ?? '',
  };
}

/** @param {Query} query */
function writeQuery(query) {
  const url = new URL(window.location.href);
  if (query.statuses.size === 0) url.searchParams.delete('status');
  else url.searchParams.set('status', [...query.statuses].join(','));
  if (query.search.trim() === '') url.searchParams.delete('q');
  else url.searchParams.set('q', query.search);
  window.history.replaceState(null, '', url);
}

/**
 * The server's rule, for live rows: the status is selected and the id or goal has the text.
 * @param {ProjectView} project
 * @param {Query} query
 */
function matches(project, query) {
  if (query.statuses.size > 0 && !query.statuses.has(project.status)) return false;
  const needle = query.search.trim().toLowerCase();
  if (needle === '') return true;
  return `${project.id}\n${project.goal}`.toLowerCase().includes(needle);
}

/**
 * Newest first, ties by id (Z to A): the order of the server's default page.
 * @param {ProjectView} left
 * @param {ProjectView} right
 */
function comesBefore(left, right) {
  if (left.createdAt !== right.createdAt) return left.createdAt > right.createdAt;
  return left.id > right.id;
}

/**
 * Marker lines for projects nothing runs and what is left of projects Redis lost
 * (GET /api/problems): each says what is wrong and the one command that fixes it.
 */
function createProblems() {
  const list = h('ul', {
    class: 'problems',
    hidden: true,
    dataset: { testid: 'project-problems' },
  });
  return {
    element: list,
    async load() {
      try {
        /** @type {import('./api-types.js').ProjectProblems} */
        const { problems, incomplete } = await getJson('/api/problems');
        const shown = problems
          .slice(0, MAX_PROBLEM_LINES)
          .map((problem) =>
            h(
              'li',
              { class: `problem problem-${problem.kind}`, dataset: { testid: 'project-problem' } },
              problem.kind === 'stuck'
                ? h(
                    'a',
                    { href: `/projects/${encodeURIComponent(problem.projectId)}` },
                    problem.projectId,
                  )
                : h('strong', {}, problem.projectId),
              `: ${problem.problem}. Fix: `,
              h('code', {}, problem.fix),
            ),
          );
        const more = problems.length - shown.length;
        if (more > 0) {
          shown.push(
            h(
              'li',
              { class: 'problem', dataset: { testid: 'project-problems-more' } },
              `and ${more} more: `,
              h('code', {}, 'baton status'),
              ' lists them all',
            ),
          );
        }
        if (incomplete) {
          // A bound stopped the search: an empty list must not read as "nothing lost".
          shown.push(
            h(
              'li',
              { class: 'problem', dataset: { testid: 'project-problems-incomplete' } },
              incomplete,
            ),
          );
        }
        replace(list, ...shown);
        list.hidden = shown.length === 0;
      } catch {
        // The stream's reconnect loads them again.
      }
    },
  };
}

/**
 * Status chips with the fleet's counts; built once, their numbers updated in place.
 * @param {Query} query
 * @param {(status: string) => void} onChange
 */
function createFilters(query, onChange) {
  /** @type {Map<string, { count: HTMLSpanElement }>} */
  const labels = new Map();
  /**
   * @param {string} status
   * @param {string} name
   */
  const chip = (status, name) => {
    const count = h('span', { class: 'count' }, '0');
    labels.set(status, { count });
    return h(
      'button',
      {
        type: 'button',
        class: `chip${status === 'all' ? '' : ` status-${status}`}`,
        dataset: { status },
        on: { click: () => onChange(status) },
      },
      `${name} `,
      count,
    );
  };
  const buttons = [chip('all', 'all'), ...STATUSES.map((status) => chip(status, status))];
  const element = h(
    'div',
    { class: 'filters', role: 'group', 'aria-label': 'Filter by status' },
    buttons,
  );
  return {
    element,
    /**
     * @param {StatusCounts} counts
     * @param {number} total
     */
    setCounts(counts, total) {
      // Every label was made above: `all` and one per status.
      const label = (/** @type {string} */ status) =>
        /** @type {{ count: HTMLSpanElement }} */ (labels.get(status));
      label('all').count.textContent = String(total);
      for (const status of STATUSES) label(status).count.textContent = String(counts[status] ?? 0);
    },
    showSelected() {
      for (const button of buttons) {
        const status = button.dataset.status;
        const on = status === 'all' ? query.statuses.size === 0 : query.statuses.has(status ?? '');
        button.classList.toggle('on', on);
        button.setAttribute('aria-pressed', String(on));
      }
    },
  };
}

/** "N projects · M running · queue: ..." with its two parts updated separately. */
function createSummary() {
  const fleet = h('span', { dataset: { testid: 'fleet-summary' } });
  const queue = h('span', { dataset: { testid: 'queue-summary' } });
  return {
    element: h('p', { class: 'summary' }, fleet, queue),
    /**
     * @param {StatusCounts} counts
     * @param {number} total
     */
    setCounts(counts, total) {
      fleet.textContent = `${total} project${total === 1 ? '' : 's'} · ${counts.running ?? 0} running`;
    },
    /** @param {import('./api-types.js').QueueCounts | null | undefined} counts */
    setQueue(counts) {
      queue.textContent = counts
        ? ` · queue: ${counts.waiting ?? 0} waiting, ${counts.active ?? 0} active, ${counts.delayed ?? 0} delayed`
        : '';
    },
  };
}

/**
 * The table body: rows by id in display order.
 * @param {(project: ProjectView) => void} onAction
 */
function createRows(onAction) {
  const body = h('tbody');
  /** @type {Map<string, ProjectRow>} */
  const rows = new Map();
  /** @type {ProjectRow[]} */
  let order = [];

  /**
   * @param {ProjectRow} row
   * @param {number} index
   */
  function insertAt(row, index) {
    const before = order[index];
    order.splice(index, 0, row);
    body.insertBefore(row.element, before?.element ?? null);
  }

  return {
    body,
    rows,
    get size() {
      return order.length;
    },
    get last() {
      return order[order.length - 1]?.project;
    },
    /** @param {ProjectView[]} projects */
    reset(projects) {
      rows.clear();
      order = projects.map((project) => createProjectRow(project, onAction));
      for (const row of order) rows.set(row.project.id, row);
      body.replaceChildren(...order.map((row) => row.element));
    },
    /** @param {ProjectView[]} projects */
    append(projects) {
      for (const project of projects) {
        if (rows.has(project.id)) continue;
        const row = createProjectRow(project, onAction);
        rows.set(project.id, row);
        insertAt(row, order.length);
      }
    },
    /** A project that now matches and sorts inside the loaded window gets its row. */
    /** @param {ProjectView} project */
    insert(project) {
      const row = createProjectRow(project, onAction);
      rows.set(project.id, row);
      const index = order.findIndex((other) => comesBefore(project, other.project));
      insertAt(row, index === -1 ? order.length : index);
    },
    /** @param {string} projectId */
    remove(projectId) {
      const row = rows.get(projectId);
      if (!row) return;
      rows.delete(projectId);
      order = order.filter((other) => other !== row);
      row.element.remove();
    },
    refreshAges() {
      for (const row of order) row.update(row.project);
    },
  };
}

/** @param {HTMLElement} main */
export function projectsPage(main) {
  const query = readQuery();
  /** @type {{ counts: StatusCounts, total: number, version: number }} */
  let counts = { counts: {}, total: 0, version: -1 };
  /** @type {string | null} */
  let nextCursor = null;
  /** The change-feed version of the rows shown; older live messages are already in them. */
  let rowsVersion = -1;
  let loading = 0;
  /** Live messages that arrived while a fresh page loads: applied once it is in. */
  /** @type {Array<[string, LiveMessage]> | null} */
  let early = null;

  const filters = createFilters(query, (status) => {
    if (status === 'all') query.statuses.clear();
    else if (query.statuses.has(status)) query.statuses.delete(status);
    else query.statuses.add(status);
    reload();
  });
  const summary = createSummary();
  const problems = createProblems();
  const rows = createRows((updated) => live.put(updated.id, { project: updated, version: -1 }));
  const search = h('input', {
    type: 'search',
    name: 'q',
    placeholder: 'Search id or goal',
    'aria-label': 'Search projects by id or goal',
    value: query.search,
    dataset: { testid: 'project-search' },
  });
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let searchTimer;
  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => {
      query.search = search.value;
      reload();
    }, SEARCH_DELAY_MS);
  });
  const more = h(
    'button',
    { type: 'button', class: 'more', hidden: true, dataset: { testid: 'load-more' } },
    'Load more',
  );
  more.addEventListener('click', () => void loadPage(false));
  const empty = h('p', { class: 'empty', hidden: true });
  const table = h(
    'table',
    { class: 'projects', dataset: { testid: 'projects-table' } },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        PROJECT_COLUMNS.map((label) => h('th', {}, label)),
      ),
    ),
    rows.body,
  );
  replace(
    main,
    h(
      'section',
      { class: 'page' },
      h('div', { class: 'page-head' }, h('h1', {}, 'Projects'), summary.element),
      h('div', { class: 'toolbar' }, search, filters.element),
      problems.element,
      table,
      empty,
      more,
    ),
  );
  filters.showSelected();

  /** @param {{ counts: StatusCounts, total: number, version: number }} next */
  function showCounts(next) {
    if (next.version < counts.version) return;
    counts = next;
    filters.setCounts(next.counts, next.total);
    summary.setCounts(next.counts, next.total);
  }

  function showEmpty() {
    const none = rows.size === 0;
    table.hidden = none;
    empty.hidden = !none;
    if (!none) return;
    const filtered = query.statuses.size > 0 || query.search.trim() !== '';
    if (filtered) replace(empty, 'No projects match.');
    else replace(empty, 'No projects yet. ', h('a', { href: '/new' }, 'Create one'), '.');
  }

  /** First page (`fresh`) or the next one after the cursor. Stale answers are dropped. */
  /** @param {boolean} fresh */
  async function loadPage(fresh) {
    const ticket = ++loading;
    /** @type {{ limit: number, status?: string, q?: string, cursor?: string }} */
    const params = { limit: PAGE_SIZE };
    if (query.statuses.size > 0) params.status = [...query.statuses].join(',');
    if (query.search.trim() !== '') params.q = query.search.trim();
    if (!fresh && nextCursor !== null) params.cursor = nextCursor;
    // Live messages wait for the fresh rows, then apply to them (if newer than they are).
    if (fresh) early ??= [];
    more.disabled = true;
    try {
      /** @type {import('./api-types.js').ProjectsPage} */
      const page = await getJson('/api/projects', params);
      if (ticket !== loading) return;
      if (fresh) rows.reset(page.projects);
      else rows.append(page.projects);
      nextCursor = page.nextCursor;
      rowsVersion = fresh ? page.version : Math.min(rowsVersion, page.version);
      showCounts({ counts: page.counts, total: page.total, version: page.version });
    } catch {
      // The stream's reconnect reloads the page; the live indicator already says so.
    } finally {
      if (ticket === loading) {
        if (early !== null) {
          const waiting = early;
          early = null;
          for (const [id, message] of waiting) live.put(id, message);
        }
        more.hidden = nextCursor === null;
        more.disabled = false;
        showEmpty();
        main.dataset.loaded = 'true';
      }
    }
  }

  function reload() {
    writeQuery(query);
    filters.showSelected();
    nextCursor = null;
    void loadPage(true);
  }

  /** Applies the latest message per project, once per frame. */
  const live = createFrameBatch((/** @type {Map<string, LiveMessage>} */ messages) => {
    for (const [id, message] of messages) {
      if (message.removed) {
        rows.remove(id);
        continue;
      }
      const { project, version } = message;
      // The rows were read after this change: they already show it (or something newer).
      if (version !== -1 && version <= rowsVersion) continue;
      const row = rows.rows.get(id);
      if (!matches(project, query)) {
        if (row) rows.remove(id);
      } else if (row) row.update(project);
      else if (nextCursor === null || (rows.last && comesBefore(project, rows.last)))
        rows.insert(project);
    }
    showEmpty();
  });

  /**
   * @param {string} id
   * @param {LiveMessage} message
   */
  function onLive(id, message) {
    if (early !== null) early.push([id, message]);
    else live.put(id, message);
  }

  let firstPage = loadPage(true);
  openStream('/api/stream', {
    /** @param {import('./api-types.js').ProjectsSnapshot} data */
    async snapshot(data) {
      summary.setQueue(data.queue);
      void problems.load();
      showCounts({ counts: data.counts, total: data.total, version: data.version });
      // From `data.version` on, every change arrives on the stream; rows read before it may have
      // missed some (a reconnect, or a change between the first page and the connection).
      await firstPage;
      if (data.version > rowsVersion) firstPage = loadPage(true);
    },
    /**
     * @param {ProjectView} view
     * @param {MessageEvent<string>} message
     */
    project(view, message) {
      onLive(view.id, { project: view, version: Number(message.lastEventId) });
    },
    /** @param {import('./api-types.js').Removed} data */
    removed(data) {
      onLive(data.id, { removed: true });
    },
    /**
     * @param {import('./api-types.js').FleetCounts} data
     * @param {MessageEvent<string>} message
     */
    counts(data, message) {
      showCounts({ ...data, version: Number(message.lastEventId) });
    },
    /** @param {import('./api-types.js').QueueCounts} queueCounts */
    queue(queueCounts) {
      summary.setQueue(queueCounts);
    },
  });
  // Keep "x s ago" honest without a server round trip (only those cells change).
  setInterval(() => rows.refreshAges(), 15_000);
}
