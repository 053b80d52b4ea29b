import type { BetaMessageParam } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { parseConversation } from './conversation.js';
import type { Action, Conversation, Orientation } from './conversation.js';
import {
  FEATURES_PATH,
  INIT_SCRIPT,
  PROGRESS_PATH,
  STARTUP_PATH,
  SIM_FAULT_MARKERS,
  SIM_MCP_MARKERS,
  WEB_APP_SERVER,
  WEB_APP_START_COMMAND,
  webAppWaitCommand,
  simMcpCalls,
  webAppServerText,
  brokenScriptText,
  buildFeatures,
  checkCommand,
  featureScript,
  featureScriptText,
  PagedFile,
  featuresFileParts,
  featuresFileText,
  featuresFromText,
  pageFromView,
  initScriptText,
  insertLineAtEnd,
  isMissing,
  okMarker,
  passesSpan,
  startupText,
} from './project-files.js';
import type { Feature } from './project-files.js';

/**
 * The scripted coding agent. Stateless like a real model: each turn is planned from the request's
 * messages only (as they look after context editing). It follows Baton's prompts: init writes the
 * memory files from the goal, resume does one failing feature end to end, the end-of-session
 * prompt updates the progress log. A failed tool call is retried once where that can help, and
 * otherwise the turn ends with an explanation.
 */

const MEMORY_TOOL = 'memory';
const BASH_TOOL = 'bash';
const EDITOR_TOOL = 'str_replace_based_edit_tool';

interface PlannedCall {
  /** Step key, carried in the tool_use id so the plan survives cleared inputs. */
  step: string;
  name: string;
  input: Record<string, unknown>;
}

export interface AgentTurn {
  text: string;
  /** Empty: the agent ends its turn. */
  calls: PlannedCall[];
}

export interface AgentOptions {
  /** Names of the tools the request offers. */
  tools: ReadonlySet<string>;
  /** Several read calls in one turn. */
  parallelToolCalls: boolean;
}

const MAX_ATTEMPTS = 2;
/**
 * Times one view (same file, same range) is sent in a session: again only when context editing
 * cleared the earlier result, and never in a loop.
 */
const MAX_VIEWS_PER_STEP = 3;

function endTurn(text: string): AgentTurn {
  return { text, calls: [] };
}

function memory(step: string, input: Record<string, unknown>): PlannedCall {
  return { step, name: MEMORY_TOOL, input };
}

function oneLine(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}...` : line;
}

/** A result context editing replaced with a placeholder: its outcome is no longer visible. */
function isClearedResult(text: string): boolean {
  return text.length < 200 && /\bclear(ed)?\b/i.test(text) && !/^Here's the content/.test(text);
}

type PagedKind = 'features' | 'progress';

const PAGED_PATHS: Record<PagedKind, string> = {
  features: FEATURES_PATH,
  progress: PROGRESS_PATH,
};

/** `view-features`, `view-features-from-120`, `view-features-at-14` -> the file and the form. */
function viewStep(step: string): { kind: PagedKind; form: 'whole' | 'from' | 'at' } | undefined {
  const match = /^view-(features|progress)(?:-(from|at)-\d+)?$/.exec(step);
  if (!match) return undefined;
  return { kind: match[1] as PagedKind, form: (match[2] as 'from' | 'at' | undefined) ?? 'whole' };
}

/** Replays the agent's earlier calls into what it knows now. */
class Knowledge {
  readonly attempts = new Map<string, number>();
  readonly errors = new Map<string, string>();
  readonly succeeded = new Set<string>();
  /** Pages of the checklist and the log read so far (a view over the size limit is cut). */
  readonly pages: Record<PagedKind, PagedFile> = {
    features: new PagedFile(),
    progress: new PagedFile(),
  };
  features: { text: string; features: Feature[] } | undefined;
  featuresMissing = false;
  /** The checklist was read whole but is not valid JSON of features. */
  featuresInvalid: string | undefined;
  progress: string | undefined;
  progressMissing = false;
  rootListing: string | undefined;
  checkOutputs = new Map<string, string>();
  /** What MCP tools answered, by step (`mcp-<feature>-<n>`). */
  mcpResults = new Map<string, string>();

  constructor(actions: Action[], goal: string | undefined) {
    for (const action of actions) this.#apply(action, goal);
  }

  count(step: string): number {
    return this.attempts.get(step) ?? 0;
  }

  attempted(step: string): boolean {
    return this.count(step) > 0;
  }

  #apply(action: Action, goal: string | undefined): void {
    const { step, result } = action;
    this.attempts.set(step, this.count(step) + 1);
    if (!result) return;
    const cleared = !result.isError && isClearedResult(result.text);
    if (result.isError && step.startsWith('write-') && /already exists/i.test(result.text)) {
      // An editor that will not overwrite: the file from an earlier session is there, and the
      // check that follows tells whether it works.
      this.errors.delete(step);
      this.succeeded.add(step);
    } else if (result.isError) this.errors.set(step, result.text);
    else if (step.startsWith('wait-app-') && /\[exit code/.test(result.text)) {
      // The web app never answered: the wait is tried again.
      this.errors.set(step, result.text);
    } else {
      this.errors.delete(step);
      this.succeeded.add(step);
    }

    if (step === 'view-root' && !cleared) this.rootListing = result.text;
    if (step === 'recreate-features' && !result.isError && goal) {
      const features = buildFeatures(goal);
      this.features = { text: featuresFileText(features), features };
      this.featuresMissing = false;
    }
    const view = viewStep(step);
    if (view && !cleared) this.#applyView(view, action);
    if (step.startsWith('check-') && !cleared) this.checkOutputs.set(step, result.text);
    if (step.startsWith('mcp-') && !cleared) this.mcpResults.set(step, result.text);
    // A failed edit means the file may differ from what was read: read it again before retrying.
    if (result.isError && step.startsWith('flip-')) this.#forget('features');
    if (result.isError && (step === 'append-progress' || step === 'end-append')) {
      this.#forget('progress');
    }
    if (!result.isError && (step === 'append-progress' || step === 'end-append')) {
      this.progressMissing = false;
    }
  }

  #forget(kind: PagedKind): void {
    this.pages[kind] = new PagedFile();
    if (kind === 'features') this.features = undefined;
    else this.progress = undefined;
  }

  #applyView(view: NonNullable<ReturnType<typeof viewStep>>, action: Action): void {
    const result = action.result!;
    if (result.isError) {
      if (!isMissing(result.text)) return;
      this.#forget(view.kind);
      if (view.kind === 'features') this.featuresMissing = true;
      else this.progressMissing = true;
      return;
    }
    const page = pageFromView(result.text);
    if (page === undefined) {
      if (
        view.kind === 'features' &&
        view.form === 'whole' &&
        /^Here's the content/.test(result.text)
      ) {
        this.featuresInvalid = result.text;
      }
      return;
    }
    if (view.form === 'whole') this.pages[view.kind] = new PagedFile();
    this.pages[view.kind].add(page, view.form !== 'at');
    const text = this.pages[view.kind].text();
    if (view.kind === 'features') {
      this.featuresMissing = false;
      if (text === undefined) return;
      const parsed = featuresFromText(text);
      this.features = parsed;
      this.featuresInvalid = parsed === undefined ? text : undefined;
    } else {
      this.progressMissing = false;
      if (text !== undefined) this.progress = text;
    }
  }

  /**
   * The next view of a paged file: the whole file first, then from the first missing line. A
   * step already tried MAX_VIEWS_PER_STEP times (its result cleared each time) is not tried again.
   */
  nextRead(kind: PagedKind): { step: string; input: Record<string, unknown> } | { stuck: string } {
    const path = PAGED_PATHS[kind];
    const pages = this.pages[kind];
    const missing = pages.lines.size === 0 ? 1 : (pages.missingFrom() ?? 1);
    const step = missing === 1 ? `view-${kind}` : `view-${kind}-from-${missing}`;
    if (this.count(step) >= MAX_VIEWS_PER_STEP) {
      return {
        stuck: `I keep losing sight of ${path} (the same view was cleared from my context ${this.count(step)} times).`,
      };
    }
    return {
      step,
      input:
        missing === 1
          ? { command: 'view', path }
          : { command: 'view', path, view_range: [missing, -1] },
    };
  }

  /** Check outcome: a cleared result counts as passed, since the agent only moved on after one. */
  checkPassed(id: string): boolean | undefined {
    const step = `check-${safeId(id)}`;
    if (!this.attempted(step)) return undefined;
    if (this.errors.has(step)) return false;
    const output = this.checkOutputs.get(step);
    return output === undefined || output.includes(okMarker(id));
  }
}

/** Reads the next page of a file, or ends the turn when that view keeps getting lost. */
function readOn(knowledge: Knowledge, kind: PagedKind, why: string): AgentTurn {
  const next = knowledge.nextRead(kind);
  if ('stuck' in next) return endTurn(`${next.stuck} Stopping here.`);
  const paging = next.step !== `view-${kind}`;
  return {
    text: paging
      ? `${PAGED_PATHS[kind]} was cut at the view limit; reading on from line ${String((next.input['view_range'] as number[])[0])}.`
      : why,
    calls: [memory(next.step, next.input)],
  };
}

function safeId(id: string): string {
  return id.replace(/[^A-Za-z0-9]/g, '-');
}

function featureList(features: Feature[]): string {
  if (features.length > 12) {
    return `${features[0]!.id} to ${features[features.length - 1]!.id}`;
  }
  return features.map((feature) => feature.id).join(', ');
}

/** The feature the agent announced it was working on (its text survives context clearing). */
function announcedFeature(
  conversation: Conversation,
): { id: string; description: string } | undefined {
  for (const text of [...conversation.narration].reverse()) {
    const match = /Working on ([A-Za-z0-9_-]+): (.*?)\.(?: |$)/.exec(text);
    if (match?.[1]) return { id: match[1], description: match[2] ?? match[1] };
  }
  return undefined;
}

function flippedIds(actions: Action[]): string[] {
  return actions
    .filter(
      (action) =>
        (action.step.startsWith('flip-') || action.step.startsWith('claim-')) &&
        action.result &&
        !action.result.isError,
    )
    .map((action) => {
      const oldStr = typeof action.input['old_str'] === 'string' ? action.input['old_str'] : '';
      return /"id"\s*:\s*"([^"]+)"/.exec(oldStr)?.[1] ?? action.step.slice('flip-'.length);
    });
}

export function planTurn(messages: BetaMessageParam[], options: AgentOptions): AgentTurn {
  const conversation = parseConversation(messages);
  const { header } = conversation;
  if (!header) {
    return endTurn(
      `(Baton model simulator) I play a scripted coding agent and need a Baton session prompt ` +
        `(a <baton_session ...> tag) to do anything. You said: "${oneLine(conversation.lastUserText, 200)}"`,
    );
  }
  if (!options.tools.has(MEMORY_TOOL)) {
    return endTurn(
      'I need the `memory` tool to work on this project (my progress lives in /memories), but this request does not offer it. Stopping.',
    );
  }
  if (conversation.endReason !== undefined || header.kind === 'end') {
    return planEnd(conversation, options);
  }
  if (header.kind === 'init') return planInit(conversation, options);
  return planResume(conversation, options);
}

function planInit(conversation: Conversation, options: AgentOptions): AgentTurn {
  const goal = conversation.goal;
  if (!goal) {
    return endTurn(
      'The init prompt has no <goal> ... </goal> section, so there is nothing to turn into features. Stopping.',
    );
  }
  const knowledge = new Knowledge(conversation.actions, goal);
  if (!knowledge.attempted('view-root')) {
    return {
      text: 'Initialising the project. First I check what my memory already holds.',
      calls: [memory('view-root', { command: 'view', path: '/memories' })],
    };
  }
  const listing = knowledge.rootListing ?? '';
  const features = buildFeatures(goal);
  const parts = featuresFileParts(features);
  const files: Array<{ step: string; path: string; text: string; what: string }> = [
    {
      step: 'create-features',
      path: FEATURES_PATH,
      text: parts.first,
      what: `the checklist: ${features.length} features (${featureList(features)}), all failing,`,
    },
    {
      step: 'create-progress',
      path: PROGRESS_PATH,
      text: initialProgress(conversation.header?.session ?? 1, features),
      what: 'the progress log',
    },
    { step: 'create-startup', path: STARTUP_PATH, text: startupText(), what: 'the startup note' },
  ];
  for (const file of files) {
    if (listing.includes(file.path)) continue;
    const error = knowledge.errors.get(file.step);
    if (
      knowledge.succeeded.has(file.step) ||
      (error !== undefined && /already exists/i.test(error))
    )
      continue;
    if (error !== undefined && knowledge.count(file.step) >= MAX_ATTEMPTS) {
      return endTurn(
        `I could not write ${file.path}: ${oneLine(error)}. Stopping so the next session can look at it.`,
      );
    }
    return {
      text:
        error !== undefined
          ? `Writing ${file.path} failed (${oneLine(error, 160)}); trying once more.`
          : `Writing ${file.what} to ${file.path}.`,
      calls: [memory(file.step, { command: 'create', path: file.path, file_text: file.text })],
    };
  }
  // A long checklist does not fit in one reply: the rest goes in with one edit per part.
  if (knowledge.succeeded.has('create-features')) {
    for (const [index, part] of parts.appends.entries()) {
      const step = `extend-features-${index + 1}`;
      if (knowledge.succeeded.has(step)) continue;
      const error = knowledge.errors.get(step);
      if (error !== undefined && knowledge.count(step) >= MAX_ATTEMPTS) {
        return endTurn(
          `I could not finish ${FEATURES_PATH} (part ${index + 2} of ${parts.appends.length + 1}): ${oneLine(error)}. Stopping so the next session can look at it.`,
        );
      }
      return {
        text: `Adding part ${index + 2} of ${parts.appends.length + 1} of the checklist to ${FEATURES_PATH}.`,
        calls: [
          memory(step, {
            command: 'str_replace',
            path: FEATURES_PATH,
            old_str: part.old,
            new_str: part.next,
          }),
        ],
      };
    }
  }
  let note = '';
  if (options.tools.has(EDITOR_TOOL)) {
    if (!knowledge.attempted('create-init')) {
      return {
        text: `Adding ${INIT_SCRIPT} to the workspace so every session can check it the same way.`,
        calls: [
          {
            step: 'create-init',
            name: EDITOR_TOOL,
            input: { command: 'create', path: INIT_SCRIPT, file_text: initScriptText() },
          },
        ],
      };
    }
    const error = knowledge.errors.get('create-init');
    if (error !== undefined)
      note = ` (${INIT_SCRIPT} could not be written: ${oneLine(error, 160)})`;
  }
  const first = features[0];
  return endTurn(
    `The project is initialised: /memories/features.json lists ${features.length} features (${featureList(features)}), all failing; ` +
      `/memories/progress.md and /memories/startup.md are written${note}. ` +
      `The next session starts with ${first ? `${first.id}: ${first.description}` : 'the first feature'}.`,
  );
}

function initialProgress(session: number, features: Feature[]): string {
  const first = features[0];
  return [
    '# Progress log',
    '',
    `## Session ${session} (init)`,
    `- Turned the goal into ${features.length} features in /memories/features.json, all failing.`,
    `- Wrote /memories/startup.md and ${INIT_SCRIPT} (runs every feature check).`,
    `- Next: ${first ? `${first.id} (${first.description})` : 'the first feature'}.`,
    '',
  ].join('\n');
}

function planResume(conversation: Conversation, options: AgentOptions): AgentTurn {
  const actions = conversation.actions.filter((action) => !action.inEndPhase);
  const knowledge = new Knowledge(actions, conversation.goal);
  const header = conversation.header!;
  const oriented = conversation.orientation;
  // The harness says everything passes: nothing to read, nothing to do.
  if (
    oriented &&
    oriented.total > 0 &&
    oriented.passing === oriented.total &&
    actions.length === 0
  ) {
    return endTurn(
      `The orientation says all ${oriented.total} features pass. Nothing is left to do; stopping.`,
    );
  }
  if (!knowledge.attempted('view-root')) {
    return {
      text: header.interrupted
        ? 'The previous session was interrupted. Reading my memory first, then checking the workspace for half-done work.'
        : oriented
          ? 'Resuming the project from the orientation Baton built. Looking at my memory directory first.'
          : 'Resuming the project. Reading my memory first.',
      calls: [memory('view-root', { command: 'view', path: '/memories' })],
    };
  }
  // With an orientation the counts, the next features and the latest entries are already known:
  // only the startup note is read whole; the checklist is read at the target's line.
  const reads: PlannedCall[] = oriented
    ? [memory('view-startup', { command: 'view', path: STARTUP_PATH })]
    : [
        memory('view-progress', { command: 'view', path: PROGRESS_PATH }),
        memory('view-features', { command: 'view', path: FEATURES_PATH }),
        memory('view-startup', { command: 'view', path: STARTUP_PATH }),
      ];
  if (header.interrupted && options.tools.has(BASH_TOOL)) {
    reads.push({ step: 'git-status', name: BASH_TOOL, input: { command: 'git status --short' } });
  }
  const pending = reads.filter((call) => !knowledge.attempted(call.step));
  if (pending.length > 0) {
    return {
      text: oriented
        ? 'Reading the startup note.'
        : 'Reading the progress log, the feature checklist and the startup note.',
      calls: options.parallelToolCalls ? pending : pending.slice(0, 1),
    };
  }

  const flippedNow = flippedIds(actions);
  if (flippedNow.length > 0) {
    if (SIM_FAULT_MARKERS.keepGoing.test(conversation.goal ?? '')) {
      const next = keepGoing(conversation, knowledge, flippedNow, options);
      if (next !== undefined) return next;
    }
    return finishResume(conversation, knowledge, flippedNow);
  }

  // The startup note is cheap to restore and the next session relies on it.
  const startupView = actions.find((action) => action.step === 'view-startup')?.result;
  if (
    startupView?.isError &&
    isMissing(startupView.text) &&
    !knowledge.attempted('recreate-startup')
  ) {
    return {
      text: '/memories/startup.md is missing; writing it again before the feature work.',
      calls: [
        memory('recreate-startup', {
          command: 'create',
          path: STARTUP_PATH,
          file_text: startupText(),
        }),
      ],
    };
  }

  if (knowledge.featuresMissing) {
    const error = knowledge.errors.get('recreate-features');
    if (!conversation.goal) {
      return endTurn(
        '/memories/features.json is missing and the prompt does not include the goal, so I cannot rebuild the checklist. Stopping: the checklist has to be restored first.',
      );
    }
    if (
      !knowledge.attempted('recreate-features') ||
      (error !== undefined && knowledge.count('recreate-features') < MAX_ATTEMPTS)
    ) {
      const features = buildFeatures(conversation.goal);
      return {
        text: '/memories/features.json is missing. Re-creating the checklist from the goal before any other work.',
        calls: [
          memory('recreate-features', {
            command: 'create',
            path: FEATURES_PATH,
            file_text: featuresFileText(features),
          }),
        ],
      };
    }
    return endTurn(
      `/memories/features.json is missing and re-creating it failed: ${oneLine(error ?? 'unknown error')}. Stopping.`,
    );
  }
  if (knowledge.featuresInvalid !== undefined) {
    return endTurn(
      '/memories/features.json is not a valid JSON list of features, and I may not rewrite the checklist. Stopping: it has to be repaired first.',
    );
  }
  // Once a feature is announced, the agent keeps going from its own words: the checklist is only
  // needed again for the flip, so clearing its view does not stall the work.
  const announced = announcedFeature(conversation);
  if (announced) {
    const known =
      knowledge.features?.features.find((feature) => feature.id === announced.id) ??
      orientedFeature(oriented, announced.id);
    if (!known || !known.passes) {
      return workOnFeature(
        known ?? { id: announced.id, description: announced.description, steps: [], passes: false },
        conversation,
        knowledge,
        options,
      );
    }
  }
  if (!knowledge.features) {
    const first = oriented?.next[0];
    if (first)
      return workOnFeature(orientedFeature(oriented, first.id)!, conversation, knowledge, options);
    const error = knowledge.errors.get('view-features');
    if (error !== undefined && knowledge.count('view-features') >= MAX_ATTEMPTS) {
      return endTurn(`I cannot read /memories/features.json: ${oneLine(error)}. Stopping.`);
    }
    return readOn(knowledge, 'features', 'Reading the feature checklist again.');
  }

  const features = knowledge.features.features;
  const target = features.find((feature) => !feature.passes);
  if (!target) {
    return endTurn(
      `All ${features.length} features pass (${featureList(features)}). Nothing is left to do.`,
    );
  }
  return workOnFeature(target, conversation, knowledge, options);
}

/**
 * `[sim:keep-going]` in the goal: after a flip the agent goes on with the next failing feature
 * in the same session (from the checklist it read, else the orientation's list, else it reads
 * the checklist), as a model with a large task does until its context window fills. Undefined
 * when nothing is left: the session then ends as usual.
 */
function keepGoing(
  conversation: Conversation,
  knowledge: Knowledge,
  flipped: string[],
  options: AgentOptions,
): AgentTurn | undefined {
  const open = (feature: { id: string; passes?: boolean }) =>
    feature.passes !== true && !flipped.includes(feature.id);
  const known = knowledge.features?.features.find(open);
  if (known) return workOnFeature(known, conversation, knowledge, options);
  if (knowledge.features) return undefined;
  const oriented = conversation.orientation;
  const listed = oriented?.next.find(open);
  if (listed) {
    return workOnFeature(orientedFeature(oriented, listed.id)!, conversation, knowledge, options);
  }
  if (oriented && oriented.total - oriented.passing - flipped.length <= 0) return undefined;
  return readOn(knowledge, 'features', 'Reading the checklist for the next failing feature.');
}

/** A feature of the orientation as a checklist entry (it is listed because it fails). */
function orientedFeature(
  orientation: Orientation | undefined,
  id: string,
): (Feature & { line: number }) | undefined {
  const found = orientation?.next.find((feature) => feature.id === id);
  return found === undefined
    ? undefined
    : {
        id: found.id,
        description: found.description,
        steps: found.steps,
        passes: false,
        line: found.line,
      };
}

function workOnFeature(
  target: Feature,
  conversation: Conversation,
  knowledge: Knowledge,
  options: AgentOptions,
): AgentTurn {
  const key = safeId(target.id);
  const announce = `Working on ${target.id}: ${oneLine(target.description, 200)}.`;
  if (!options.tools.has(EDITOR_TOOL) || !options.tools.has(BASH_TOOL)) {
    return endTurn(
      `${announce} I need the \`${EDITOR_TOOL}\` and \`${BASH_TOOL}\` tools to implement and check it, and this request does not offer both. Stopping.`,
    );
  }
  // `[sim:claim-first]`: the lie verification exists for. Flip before writing anything; when
  // Baton refuses the flip, do the work for real.
  const claim = `claim-${key}`;
  if (SIM_FAULT_MARKERS.claimFirst.test(target.description) && !knowledge.attempted(claim)) {
    const span = flipSpan(target.id, conversation, knowledge);
    if (typeof span !== 'string') return span;
    return {
      text: `${announce} It should work already; marking ${target.id} as passing without writing or checking it.`,
      calls: [
        memory(claim, {
          command: 'str_replace',
          path: FEATURES_PATH,
          old_str: span,
          new_str: span.replace(/false$/, 'true'),
        }),
      ],
    };
  }
  const write = `write-${key}`;
  if (!knowledge.succeeded.has(write)) {
    const error = knowledge.errors.get(write);
    if (error !== undefined && knowledge.count(write) >= MAX_ATTEMPTS) {
      return endTurn(
        `${announce} Writing ${featureScript(target.id)} failed twice: ${oneLine(error)}. Leaving it failing; stopping.`,
      );
    }
    return {
      text: `${announce} ${error !== undefined ? `The first write failed (${oneLine(error, 160)}); trying again.` : `Writing ${featureScript(target.id)}.`}`,
      calls: [
        {
          step: write,
          name: EDITOR_TOOL,
          input: {
            command: 'create',
            path: featureScript(target.id),
            file_text: featureScriptText(target),
          },
        },
      ],
    };
  }
  // `[sim:breaks Fn]`: a careless change to another feature's file while doing this one.
  const broken = SIM_FAULT_MARKERS.breaks.exec(target.description)?.[1];
  const breakStep = `break-${key}`;
  if (broken !== undefined && broken !== target.id && !knowledge.attempted(breakStep)) {
    return {
      text: `While doing ${target.id} I am also tidying ${featureScript(broken)}.`,
      calls: [
        {
          step: breakStep,
          name: EDITOR_TOOL,
          input: {
            command: 'create',
            path: featureScript(broken),
            file_text: brokenScriptText(broken),
          },
        },
      ],
    };
  }
  const usingMcp = useMcpTools(target, key, announce, knowledge, options);
  if (usingMcp !== undefined) return usingMcp;
  const check = `check-${key}`;
  const passed = knowledge.checkPassed(target.id);
  if (passed !== true) {
    if (passed === false && knowledge.count(check) >= MAX_ATTEMPTS) {
      const output = knowledge.errors.get(check) ?? knowledge.checkOutputs.get(check) ?? '';
      return endTurn(
        `The check of ${target.id} failed twice (\`${checkCommand(target.id)}\` said: ${oneLine(output, 200)}). ` +
          `${target.id} stays failing; stopping so the next session can look into it.`,
      );
    }
    return {
      text:
        passed === false
          ? `The check of ${target.id} did not print "${okMarker(target.id)}"; running it once more.`
          : `Checking ${target.id} end to end with \`${checkCommand(target.id)}\`.`,
      calls: [{ step: check, name: BASH_TOOL, input: { command: checkCommand(target.id) } }],
    };
  }
  const flip = `flip-${key}`;
  const flipError = knowledge.errors.get(flip);
  if (flipError !== undefined && knowledge.count(flip) >= MAX_ATTEMPTS) {
    return endTurn(
      `I could not mark ${target.id} as passing: ${oneLine(flipError)}. Stopping; it passes its check but the checklist still says false.`,
    );
  }
  const span = flipSpan(target.id, conversation, knowledge);
  if (typeof span !== 'string') return span;
  return {
    text:
      flipError !== undefined
        ? `Marking ${target.id} failed (${oneLine(flipError, 160)}); retrying with the file as it is now.`
        : `The check printed "${okMarker(target.id)}". Marking ${target.id} as passing.`,
    calls: [
      memory(flip, {
        command: 'str_replace',
        path: FEATURES_PATH,
        old_str: span,
        new_str: span.replace(/false$/, 'true'),
      }),
    ],
  };
}

/**
 * `[sim:web-app PORT]`, `[sim:mcp TOOL {json}]` and `[sim:mcp-expect TEXT]` (SIM_MCP_MARKERS):
 * write the web app, call the MCP tools in order, and look for the expected text in the last
 * result. `undefined` when there is nothing (more) to do with MCP for this feature.
 */
function useMcpTools(
  target: Feature,
  key: string,
  announce: string,
  knowledge: Knowledge,
  options: AgentOptions,
): AgentTurn | undefined {
  const port = SIM_MCP_MARKERS.webApp.exec(target.description)?.[1];
  if (port !== undefined) {
    const write = `write-app-${key}`;
    if (!knowledge.succeeded.has(write)) {
      const error = knowledge.errors.get(write);
      if (error !== undefined && knowledge.count(write) >= MAX_ATTEMPTS) {
        return endTurn(
          `${announce} Writing ${WEB_APP_SERVER} failed twice: ${oneLine(error)}. Stopping.`,
        );
      }
      return {
        text: `Writing ${WEB_APP_SERVER} for the web app of ${target.id}.`,
        calls: [
          {
            step: write,
            name: EDITOR_TOOL,
            input: {
              command: 'create',
              path: WEB_APP_SERVER,
              file_text: webAppServerText(target.id, Number(port)),
            },
          },
        ],
      };
    }
    // Started from bash in the background, then awaited from bash: the browser reaches it on
    // the session's one loopback.
    const commands: Array<[string, string, string]> = [
      [`start-app-${key}`, WEB_APP_START_COMMAND, `Starting the web app of ${target.id}.`],
      [`wait-app-${key}`, webAppWaitCommand(Number(port)), `Waiting for it to answer on ${port}.`],
    ];
    for (const [step, command, text] of commands) {
      if (knowledge.succeeded.has(step)) continue;
      const error = knowledge.errors.get(step);
      if (error !== undefined && knowledge.count(step) >= MAX_ATTEMPTS) {
        return endTurn(`${announce} \`${command}\` failed twice: ${oneLine(error)}. Stopping.`);
      }
      return { text, calls: [{ step, name: BASH_TOOL, input: { command } }] };
    }
  }
  const calls = simMcpCalls(target.description);
  for (const [index, call] of calls.entries()) {
    const step = `mcp-${key}-${index + 1}`;
    if (knowledge.succeeded.has(step)) continue;
    if (!options.tools.has(call.tool)) {
      return endTurn(
        `${announce} I need the \`${call.tool}\` tool to check it, and this request does not offer it. Stopping.`,
      );
    }
    const error = knowledge.errors.get(step);
    if (error !== undefined && knowledge.count(step) >= MAX_ATTEMPTS) {
      return endTurn(
        `${announce} \`${call.tool}\` failed twice: ${oneLine(error)}. ${target.id} stays failing; stopping.`,
      );
    }
    return {
      text:
        error === undefined
          ? `Checking ${target.id} with \`${call.tool}\`.`
          : `\`${call.tool}\` failed (${oneLine(error, 160)}); trying once more.`,
      calls: [{ step, name: call.tool, input: call.input }],
    };
  }
  const expected = SIM_MCP_MARKERS.expect.exec(target.description)?.[1];
  const last = knowledge.mcpResults.get(`mcp-${key}-${calls.length}`);
  if (
    expected !== undefined &&
    calls.length > 0 &&
    last !== undefined &&
    !last.includes(expected)
  ) {
    return endTurn(
      `${announce} The last MCP result did not show "${expected}" (it said: ${oneLine(last, 200)}). ${target.id} stays failing; stopping.`,
    );
  }
  return undefined;
}

/**
 * The exact text to flip: from the whole checklist when it was read, else from the feature's own
 * line (the orientation says which), read with a one-line `view_range`. A line that no longer
 * holds the feature sends the agent back to reading the file in pages.
 */
function flipSpan(
  id: string,
  conversation: Conversation,
  knowledge: Knowledge,
): string | AgentTurn {
  if (knowledge.features) {
    const span = passesSpan(knowledge.features.text, id);
    if (span !== undefined) return span;
    return readOn(knowledge, 'features', `Reading the checklist again before marking ${id}.`);
  }
  const line = orientedFeature(conversation.orientation, id)?.line;
  if (line !== undefined) {
    const step = `view-features-at-${line}`;
    const text = knowledge.pages.features.lines.get(line);
    if (text !== undefined) {
      const span = passesSpan(text, id);
      if (span !== undefined) return span;
    } else if (knowledge.count(step) < MAX_VIEWS_PER_STEP) {
      return {
        text: `Reading line ${line} of the checklist, where ${id} is, before marking it.`,
        calls: [memory(step, { command: 'view', path: FEATURES_PATH, view_range: [line, line] })],
      };
    }
  }
  return readOn(knowledge, 'features', `Reading the checklist before marking ${id}.`);
}

/** After the flip: append the session's entry to the progress log, then end the turn. */
function finishResume(
  conversation: Conversation,
  knowledge: Knowledge,
  flipped: string[],
): AgentTurn {
  const session = conversation.header?.session ?? 1;
  const id = flipped[flipped.length - 1]!;
  const feature = knowledge.features?.features.find((candidate) => candidate.id === id);
  const description = feature?.description ?? descriptionFromNarration(conversation, id);
  const next = nextFeature(conversation, knowledge, flipped);
  const entry = [
    `## Session ${session}`,
    `- Worked on ${id}: ${description}.`,
    `- Wrote ${featureScript(id)}; \`${checkCommand(id)}\` printed "${okMarker(id)}".`,
    `- ${id} passes now. Next: ${next}.`,
  ];
  const appended = appendProgress('append-progress', knowledge, entry, progressLines(conversation));
  if (appended) return appended;
  return endTurn(
    `${id} passes now and the progress log is updated. One feature per session, so I stop here.`,
  );
}

/** What the next session should do, from the checklist or the orientation. */
function nextFeature(conversation: Conversation, knowledge: Knowledge, flipped: string[]): string {
  const open = (feature: { id: string; passes?: boolean }) =>
    feature.passes !== true && !flipped.includes(feature.id);
  const known = knowledge.features?.features.find(open);
  if (known) return `${known.id} (${known.description})`;
  if (knowledge.features) return 'nothing: every feature passes';
  const oriented = conversation.orientation;
  const listed = oriented?.next.find(open);
  if (listed) return `${listed.id} (${listed.description})`;
  if (oriented && oriented.total - oriented.passing - flipped.length <= 0) {
    return 'nothing: every feature passes';
  }
  return 'the first feature that still fails';
}

function descriptionFromNarration(conversation: Conversation, id: string): string {
  for (const text of conversation.narration) {
    const match = new RegExp(`Working on ${id}: (.*?)\\.( |$)`).exec(text);
    if (match?.[1]) return match[1];
  }
  return id;
}

/** The next call that appends `entry` to progress.md, or undefined once it is appended. */
/** Lines of a text as the memory tool counts them (a final newline ends the last line). */
function lineCount(text: string): number {
  if (text === '') return 0;
  return text.replace(/\n$/, '').split('\n').length;
}

/**
 * progress.md's line count without reading it: the orientation's count plus the lines this
 * session inserted since. Unknown once anything else changed the file.
 */
function progressLines(conversation: Conversation): number | undefined {
  let lines = conversation.orientation?.progressLines;
  if (lines === undefined) return undefined;
  for (const action of conversation.actions) {
    if (action.name !== MEMORY_TOOL || action.input['path'] !== PROGRESS_PATH) continue;
    if (action.input['command'] === 'view') continue;
    if (action.input['command'] !== 'insert' || !action.result || action.result.isError) {
      return undefined;
    }
    lines += lineCount(String(action.input['insert_text'] ?? ''));
  }
  return lines;
}

function appendProgress(
  step: string,
  knowledge: Knowledge,
  entry: string[],
  knownLines: number | undefined,
): AgentTurn | undefined {
  if (knowledge.succeeded.has(step)) return undefined;
  const error = knowledge.errors.get(step);
  if (error !== undefined && knowledge.count(step) >= MAX_ATTEMPTS) {
    return endTurn(`Updating /memories/progress.md failed twice: ${oneLine(error)}. Stopping.`);
  }
  if (knowledge.progressMissing) {
    return {
      text: '/memories/progress.md is missing; re-creating it with this entry.',
      calls: [
        memory(step, {
          command: 'create',
          path: PROGRESS_PATH,
          file_text: `# Progress log\n\n${entry.join('\n')}\n`,
        }),
      ],
    };
  }
  // The orientation gave the log's length: append without reading it (a refused insert means
  // the count was wrong, and the retry reads the file first).
  if (knowledge.progress === undefined && knownLines !== undefined && error === undefined) {
    return {
      text: 'Appending this session to the end of the progress log.',
      calls: [
        memory(step, {
          command: 'insert',
          path: PROGRESS_PATH,
          insert_line: knownLines,
          insert_text: `\n${entry.join('\n')}\n`,
        }),
      ],
    };
  }
  if (knowledge.progress === undefined) {
    const next = knowledge.nextRead('progress');
    if ('stuck' in next) {
      return endTurn(`${next.stuck} I cannot append to it safely; stopping.`);
    }
    return readOn(knowledge, 'progress', 'Reading the progress log before appending to it.');
  }
  return {
    text:
      error !== undefined
        ? `Appending failed (${oneLine(error, 160)}); trying again.`
        : 'Appending this session to the progress log.',
    calls: [
      memory(step, {
        command: 'insert',
        path: PROGRESS_PATH,
        insert_line: insertLineAtEnd(knowledge.progress),
        insert_text: `\n${entry.join('\n')}\n`,
      }),
    ],
  };
}

function planEnd(conversation: Conversation, options: AgentOptions): AgentTurn {
  const header = conversation.header!;
  const standalone = header.kind === 'end' && conversation.endReason === undefined;
  const reason = conversation.endReason ?? 'end_session';
  const phase = standalone
    ? conversation.actions
    : conversation.actions.filter((action) => action.inEndPhase);
  const knowledge = new Knowledge(phase, conversation.goal);
  // The orientation already says which features come next: only the log is needed to append.
  const oriented = conversation.orientation !== undefined;
  const reads: PlannedCall[] =
    oriented && progressLines(conversation) !== undefined
      ? []
      : [
          memory('view-progress', { command: 'view', path: PROGRESS_PATH }),
          ...(oriented ? [] : [memory('view-features', { command: 'view', path: FEATURES_PATH })]),
        ];
  const pending = reads.filter((call) => !knowledge.attempted(call.step));
  if (pending.length > 0) {
    return {
      text: `The session is ending (${reason}). Reading ${oriented ? 'the progress log' : 'the progress log and the checklist'} to record where things stand.`,
      calls: options.parallelToolCalls ? pending : pending.slice(0, 1),
    };
  }
  const heading = `## Session ${header.session} end`;
  if (knowledge.progress?.includes(heading) && !knowledge.attempted('end-append')) {
    return endTurn(
      `The progress log already has a "Session ${header.session} end" entry. Nothing more to record; stopping.`,
    );
  }
  const before = standalone ? [] : conversation.actions.filter((action) => !action.inEndPhase);
  const flipped = flippedIds(before);
  const halfDone = before
    .filter((action) => action.step.startsWith('write-') && action.result && !action.result.isError)
    .map((action) => action.step.slice('write-'.length))
    .filter((key) => !flipped.some((id) => safeId(id) === key));
  const next = nextFeature(conversation, knowledge, flipped);
  const entry = [
    `${heading} (${reason})`,
    `- Finished: ${flipped.length > 0 ? flipped.join(', ') : 'no feature was finished in this session'}.`,
    ...(halfDone.length > 0
      ? [`- Half done: ${halfDone.join(', ')} (script written in features/, not yet verified).`]
      : []),
    `- Next: ${next === 'the first feature that still fails' ? 'read /memories/features.json and pick the first failing feature' : next}.`,
  ];
  const appended = appendProgress('end-append', knowledge, entry, progressLines(conversation));
  if (appended) return appended;
  return endTurn(`Progress log updated with the "Session ${header.session} end" entry. Stopping.`);
}
