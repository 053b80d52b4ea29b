import { errorMessage, getJson, postJson } from './api.js';
import { h, replace } from './dom.js';

/**
 * @param {string} label
 * @param {HTMLElement} input
 * @param {string} [hint]
 */
function field(label, input, hint) {
  return h(
    'label',
    { class: 'field' },
    h('span', { class: 'label' }, label),
    input,
    hint ? h('span', { class: 'hint' }, hint) : null,
  );
}

/** @param {string | null | undefined} value */
function numberOrUndefined(value) {
  if (value === '' || value === null || value === undefined) return undefined;
  const number = Number(value);
  return Number.isFinite(number) ? number : Number.NaN;
}

/**
 * The context preset select, filled from GET /api/presets (the list @baton/context-config owns),
 * with the default preset selected; `data-loaded` says the options are there. Until then an empty
 * select sends no preset and the project gets the server's default.
 */
function presetSelect() {
  const select = h('select', { name: 'contextPreset' });
  /** @type {Promise<import('./api-types.js').Presets>} */
  const presetsRead = getJson('/api/presets');
  presetsRead

    .then(({ presets, default: preset }) => {
      select.replaceChildren(
        ...presets.map(({ name, intent }) =>
          h('option', { value: name, title: intent, selected: name === preset }, name),
        ),
      );
      select.dataset.loaded = 'true';
    })
    .catch(() => {
      select.dataset.loaded = 'error';
    });
  return select;
}

/** Network hosts the project's commands may reach through the sandbox's filtering proxy. */
function sandboxFieldset() {
  return h(
    'fieldset',
    {},
    h('legend', {}, 'Sandbox (optional)'),
    field(
      'Allowed hosts',
      h('input', {
        name: 'allowedHosts',
        placeholder: 'registry.npmjs.org, *.github.com',
        autocomplete: 'off',
      }),
      'Commands reach these over HTTP(S) through the sandbox’s filtering proxy; commas or spaces between names. Default: no network.',
    ),
  );
}

/** Verified progress (the project's `verification`, as `--check` and `--require-checks` set it). */
function verificationFieldset() {
  return h(
    'fieldset',
    { dataset: { testid: 'verification-fields' } },
    h('legend', {}, 'Verified progress (optional)'),
    field(
      'Default check',
      h('input', {
        name: 'check',
        placeholder: 'npm test -- --grep "$BATON_FEATURE_ID"',
        autocomplete: 'off',
      }),
      'Run in the sandbox for features without a check of their own, with the feature’s id in BATON_FEATURE_ID; exit 0 means it works.',
    ),
    field(
      'Require checks',
      h('input', { name: 'requireChecks', type: 'checkbox', value: 'yes' }),
      'Refuse a flip to passing when the feature has no check to run, instead of accepting it as claimed.',
    ),
    field(
      'Check timeout (seconds)',
      h('input', { name: 'checkTimeoutSeconds', type: 'number', min: 1, max: 3600, step: 1 }),
      'Past it a check is killed and counts as failed. Default 120.',
    ),
    field(
      'Re-run budget per session (seconds)',
      h('input', { name: 'regressionBudgetSeconds', type: 'number', min: 1, max: 3600, step: 1 }),
      'Time each session’s end may spend re-running passing features’ checks. Default 60; all run before the project completes.',
    ),
  );
}

/**
 * The form's verification settings as the project input has them; the server validates them.
 * @param {string | undefined} check
 * @param {boolean} requireChecks
 * @param {string | undefined} checkTimeoutSeconds
 * @param {string | undefined} regressionBudgetSeconds
 */
function verificationInput(check, requireChecks, checkTimeoutSeconds, regressionBudgetSeconds) {
  const input = {
    check,
    requireChecks: requireChecks ? true : undefined,
    checkTimeoutSeconds: numberOrUndefined(checkTimeoutSeconds),
    regressionBudgetSeconds: numberOrUndefined(regressionBudgetSeconds),
  };
  return Object.values(input).every((value) => value === undefined) ? undefined : input;
}

/**
 * The form's sandbox settings as the project input has them; the server validates each name.
 * @param {string | undefined} allowedHosts
 */
function sandboxInput(allowedHosts) {
  const hosts = (allowedHosts ?? '').split(/[\s,]+/).filter((host) => host !== '');
  return hosts.length > 0 ? { allowedHosts: hosts } : undefined;
}

/**
 * MCP servers in `.mcp.json`'s format. The server validates them with the same schema as
 * `baton enqueue --mcp-config` and the control API; here only the JSON is checked.
 */
function mcpFieldset() {
  return h(
    'fieldset',
    {},
    h('legend', {}, 'MCP servers (optional)'),
    field(
      'Configuration',
      h('textarea', {
        name: 'mcp',
        rows: 5,
        spellcheck: false,
        placeholder:
          '{"mcpServers": {"browser": {"command": "npx", "args": ["@playwright/mcp@latest"]}}}',
      }),
      'The .mcp.json format. Secrets as ${VAR}, read from the worker’s environment at each session; never stored. Servers run in the sandbox; remote ones only at allowed hosts.',
    ),
  );
}

/**
 * The form's MCP text as the project input has it, or a one-line error for bad JSON.
 * @param {string | undefined} text
 * @returns {{ value: unknown, error?: undefined } | { value?: undefined, error: string }}
 */
function mcpInput(text) {
  if (text === undefined) return { value: undefined };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: 'mcp: is not valid JSON' };
  }
}

/** @param {HTMLElement} main */
export function newProjectPage(main) {
  const message = h('p', { class: 'form-message', role: 'alert' });
  const form = h(
    'form',
    { class: 'create', dataset: { testid: 'create-form' }, novalidate: true },
    field(
      'Project id',
      h('input', {
        name: 'id',
        required: true,
        pattern: '[A-Za-z0-9][A-Za-z0-9_-]{0,63}',
        maxlength: 64,
        placeholder: 'todo-app',
      }),
      'Letters, digits, - and _.',
    ),
    field(
      'Goal',
      h('textarea', {
        name: 'goal',
        required: true,
        rows: 8,
        placeholder: 'Build a small CLI todo app.\n- add a todo\n- list todos\n- mark a todo done',
      }),
      'Bullet lines become features in the checklist.',
    ),
    field(
      'Repository',
      h('input', {
        name: 'repo',
        placeholder: 'path or git URL (default: none, start from nothing)',
      }),
      'Read at creation; the work goes to its branch baton/<id>, never your checkout.',
    ),
    field(
      'Base branch',
      h('input', { name: 'base', placeholder: 'default: the repository’s current branch' }),
    ),
    field(
      'Skip hooks',
      h('input', { name: 'skipHooks', type: 'checkbox', value: 'yes' }),
      'Commit checkpoints without the repository’s commit hooks.',
    ),
    field(
      'Workspace',
      h('input', {
        name: 'workspace',
        placeholder: '/absolute/path (default: each worker’s BATON_HOME/workspaces/<id>)',
      }),
    ),
    field(
      'Model',
      h('input', { name: 'model', placeholder: 'default (BATON_MODEL or the simulator)' }),
    ),
    field(
      'Fallback model',
      h('input', {
        name: 'fallbackModel',
        placeholder: 'default: the worker’s BATON_FALLBACK_MODEL, if set',
      }),
      'Sessions continue on this model when theirs stays overloaded after the retries.',
    ),
    field('Context preset', presetSelect()),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Budgets (optional)'),
      field('Max USD', h('input', { name: 'maxUsd', type: 'number', min: 0, step: 'any' })),
      field('Max sessions', h('input', { name: 'maxSessions', type: 'number', min: 1, step: 1 })),
      field('Max tokens', h('input', { name: 'maxTokens', type: 'number', min: 1, step: 1 })),
      field(
        'Max turns per session',
        h('input', { name: 'maxTurns', type: 'number', min: 1, step: 1 }),
      ),
    ),
    sandboxFieldset(),
    verificationFieldset(),
    mcpFieldset(),
    h(
      'div',
      { class: 'form-actions' },
      h('button', { type: 'submit' }, 'Create and queue'),
      message,
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const data = new FormData(form);
    /** @param {string} name */
    const text = (name) => {
      const value = String(data.get(name) ?? '').trim();
      return value === '' ? undefined : value;
    };
    /** @type {Record<string, unknown> & { session?: { maxTurns: number | undefined } }} */
    const budgets = {
      maxUsd: numberOrUndefined(text('maxUsd')),
      maxSessions: numberOrUndefined(text('maxSessions')),
      maxTokens: numberOrUndefined(text('maxTokens')),
      session: { maxTurns: numberOrUndefined(text('maxTurns')) },
    };
    if (budgets.session?.maxTurns === undefined) delete budgets.session;
    for (const key of Object.keys(budgets)) if (budgets[key] === undefined) delete budgets[key];
    const mcp = mcpInput(text('mcp'));
    if (mcp.error !== undefined) {
      message.classList.add('error');
      replace(message, mcp.error);
      return;
    }
    const body = {
      id: text('id'),
      goal: text('goal'),
      repo: text('repo'),
      base: text('base'),
      skipHooks: data.get('skipHooks') === 'yes' ? true : undefined,
      workspace: text('workspace'),
      model: text('model'),
      fallbackModel: text('fallbackModel'),
      contextPreset: text('contextPreset'),
      budgets: Object.keys(budgets).length > 0 ? budgets : undefined,
      sandbox: sandboxInput(text('allowedHosts')),
      verification: verificationInput(
        text('check'),
        data.get('requireChecks') === 'yes',
        text('checkTimeoutSeconds'),
        text('regressionBudgetSeconds'),
      ),
      mcp: mcp.value,
    };
    const button = /** @type {HTMLButtonElement} */ (form.querySelector('button[type=submit]'));
    button.disabled = true;
    message.classList.remove('error');
    replace(message, 'Creating…');
    try {
      /** @type {import('./api-types.js').ProjectAnswer} */
      const result = await postJson('/api/projects', body);

      window.location.assign(`/projects/${encodeURIComponent(result.project.id)}`);
    } catch (error) {
      message.classList.add('error');
      replace(message, errorMessage(error));
      button.disabled = false;
    }
  });
  replace(
    main,
    h(
      'section',
      { class: 'page narrow' },
      h('h1', {}, 'New project'),
      h(
        'p',
        { class: 'muted' },
        'The project is queued for the workers, exactly like `baton enqueue`.',
      ),
      form,
    ),
  );
}
