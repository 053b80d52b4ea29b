// The project page's memory panel: the files under /memories (GET /api/projects/:id/memory),
// the picked file with its kept versions (…/memory/file, …/memory/history) and a diff between
// two versions (…/memory/diff).
import { errorMessage, getJson, projectPath } from './api.js';
import { h, replace, setSanitizedHtml } from './dom.js';
import { formatDateTime, formatNumber } from './format.js';

/**
 * Keeps 3 lines of context around changes; longer unchanged runs become one `skip` line.
 * @typedef {{ op: string, text?: string, count?: number }} DiffLine
 * @param {DiffLine[]} lines
 * @returns {DiffLine[]}
 */
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

/**
 * createMemoryFilesPanel(projectId) -> { element, load(), reopen(), isOpen(path) }: `load` lists
 * the files; `reopen` fetches the picked file again (nothing when none is picked); `isOpen`
 * tells whether a changed path is the one shown.
 * @param {string} projectId
 */
export function createMemoryFilesPanel(projectId) {
  /** @type {string | null} */
  let selectedFile = null;
  const files = h('ul', { class: 'files', dataset: { testid: 'memory-files' } });
  const fileView = h(
    'div',
    { class: 'file-view', dataset: { testid: 'memory-file' } },
    h('p', { class: 'muted' }, 'Pick a file.'),
  );

  async function load() {
    try {
      /** @type {import('./api-types.js').MemoryList} */
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
      replace(files, h('li', { class: 'error' }, errorMessage(error)));
    }
  }

  /** @param {string} path */
  async function openFile(path) {
    selectedFile = path;
    const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (
      files.querySelectorAll('button.file-link')
    );
    for (const button of buttons) button.classList.toggle('on', button.dataset.path === path);
    const base = projectPath(projectId);
    try {
      /** @type {Promise<import('./api-types.js').MemoryFile>} */
      const fileRead = getJson(`${base}/memory/file`, { path });
      /** @type {Promise<import('./api-types.js').MemoryHistory>} */
      const historyRead = getJson(`${base}/memory/history`, { path });
      const [file, history] = await Promise.all([fileRead, historyRead]);
      const content = h('div', { class: 'file-content' });
      if (file.html !== null) setSanitizedHtml(content, file.html);
      else content.append(h('pre', {}, file.content));
      const diffBox = h('div', { class: 'diff', dataset: { testid: 'memory-diff' } });
      const versions = history.versions;
      replace(
        fileView,
        h('h3', {}, path, file.truncated ? ' (cut at 1 MiB)' : ''),
        content,
        h('h3', {}, 'History'),
        versions.length === 0
          ? // The server stopped sending `supported` (every store keeps history): reading it
            // said "This store keeps no history." for every file without versions.
            h('p', { class: 'muted' }, 'No versions kept for this file.')
          : historyList(path, versions, diffBox),
        diffBox,
      );
    } catch (error) {
      replace(fileView, h('p', { class: 'error' }, errorMessage(error)));
    }
  }

  /**
   * @param {string} path
   * @param {import('./api-types.js').MemoryVersion[]} versions
   * @param {HTMLElement} diffBox
   */
  function historyList(path, versions, diffBox) {
    return h(
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
  }

  /**
   * @param {string} path
   * @param {string | undefined} from
   * @param {string} to
   * @param {string} fromLabel
   * @param {string} toLabel
   * @param {HTMLElement} box
   */
  async function showDiff(path, from, to, fromLabel, toLabel, box) {
    try {
      /** @type {import('./api-types.js').MemoryDiff} */
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
      replace(box, h('p', { class: 'error' }, errorMessage(error)));
    }
  }

  return {
    element: h('div', { class: 'memory' }, files, fileView),
    load,
    reopen: async () => {
      if (selectedFile) await openFile(selectedFile);
    },
    isOpen: /** @param {string} path */ (path) => path === selectedFile,
  };
}
