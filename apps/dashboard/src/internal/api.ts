/** The JSON API. Every handler validates its input with zod and reads through the control API. */
import {
  CONTEXT_PRESETS,
  CONTEXT_PRESET_NAMES,
  DEFAULT_CONTEXT_PRESET,
} from '@baton/context-config';
import { readFeatures, type Transcript } from '@baton/session';
import { Hono, type Context } from 'hono';
import { WorkspaceError, diffProjectBranch, workspaceGitPaths } from '@baton/workspace';
import {
  eventsQuerySchema,
  guidanceBodySchema,
  projectsQuerySchema,
  searchQuerySchema,
  sessionsQuerySchema,
  tokensQuerySchema,
} from '@baton/projects/schema';
import { PROJECT_SORTS, projectPageCursor } from '@baton/projects/schema';
import { projectChecksReport, type SourcePolicy } from '@baton/projects';
import type * as Browser from '../../public/js/api-types.js';
import type { DashboardControl } from '../control.js';
import type { EventHub } from './event-hub.js';
import { renderMarkdown } from './markdown.js';
import { addMemoryRoutes } from './memory-routes.js';
import { projectRoutes } from './project-routes.js';
import { projectStream, projectsStream, type SseOptions } from './sse.js';
import { ApiError } from './api-error.js';
import { clientAddress } from './auth.js';
import { fitRows } from './page-bytes.js';
import { createSingleFlight } from './single-flight.js';
import { createClientRateLimit, createWorkGate, rateLimited, underGate } from './work-limits.js';
import type { DashboardTelemetry } from './telemetry.js';
import {
  jsonBody,
  validFeatureParams,
  validJson,
  validProjectId,
  validQuery,
} from './validation.js';
import { projectView, tokenSeries } from './views.js';

export interface ApiOptions {
  control: DashboardControl;
  hub: EventHub;
  sse: SseOptions;
  /** Largest memory file returned whole (bytes); bigger ones are cut. */
  maxFileBytes: number;
  /** `BATON_HOME`, absolute: a project's branch is fetched into `<home>/cache/<id>.git` to diff it. */
  home: string;
  /** Request metrics, the access log and `/metrics`. */
  telemetry: DashboardTelemetry;
  /** Which `repo` and `workspace` a project created here may name. */
  sourcePolicy: SourcePolicy;
  /** Event streams open at once, in all and per client address; past either, 503. */
  streamLimits: { total: number; perAddress: number };
  /** Most bytes of rows in one list answer (page-bytes.ts); a page cut there says where to go on. */
  maxPageBytes: number;
  /** Heavy requests (branch diff, search, transcript) running at once; past it, 503. */
  maxHeavyRequests: number;
  /** Projects one client address may create per minute (a burst of as many); past it, 429. */
  projectCreationsPerMinute: number;
  /** Called with unexpected errors and with the details of errors answered with a fixed message. */
  onError: (error: unknown) => void;
}

/** Session summaries the project view starts with; older ones are paged on demand. */
const SESSION_WINDOW = 50;
/** Events whose turns the token chart starts with; earlier ones are paged on demand. */
const TOKEN_WINDOW_EVENTS = 500;

/** Largest branch diff returned (characters); a longer one is cut and says so. */
const MAX_DIFF_CHARS = 500_000;

export { ApiError };

/** The sort a projects page was read in (the control API already refused any other). */
function pageSort(sort: string | undefined): (typeof PROJECT_SORTS)[number] {
  return PROJECT_SORTS.find((known) => known === sort) ?? 'created';
}

/** Maps errors thrown by the control API (WorkerError codes) to HTTP answers. */
export function controlErrorToApi(error: unknown): ApiError | null {
  if (error instanceof ApiError) return error;
  if (typeof error !== 'object' || error === null) return null;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : 'request failed';
  switch (code) {
    case 'invalid_input':
      return new ApiError(400, 'invalid_input', message);
    case 'not_found':
      return new ApiError(404, 'not_found', message);
    case 'conflict':
    case 'exists':
      return new ApiError(409, 'conflict', message);
    // Writes wait for a worker of this version to migrate the data; the line says so.
    case 'migration_pending':
    case 'newer_data':
      return new ApiError(503, code, message);
    case 'redis_unreachable':
    case 'unavailable':
      return new ApiError(503, 'unavailable', 'Redis is unreachable.');
    default:
      return null;
  }
}

/** The transcript with each model text block's Markdown rendered (and sanitised) as `html`. */
function withRenderedText(transcript: Transcript) {
  return {
    ...transcript,
    messages: transcript.messages.map((message) =>
      message.role !== 'assistant'
        ? message
        : {
            ...message,
            content: message.content.map((block) =>
              block.type === 'text' ? { ...block, html: renderMarkdown(block.text) } : block,
            ),
          },
    ),
  };
}

export function createApiRoutes(options: ApiOptions): Hono {
  const { control, hub } = options;
  const api = new Hono();
  // Branch diffs run `git fetch`: one per project at a time, whoever asks.
  const diffs = createSingleFlight();
  // Git, search scans and transcript rendering: a few at a time, so probes and pages stay fast.
  const heavy = underGate(createWorkGate(options.maxHeavyRequests));
  const creations = rateLimited(
    createClientRateLimit({ perMinute: options.projectCreationsPerMinute }),
    'new projects',
  );

  async function requireProject(projectId: string) {
    const project = await control.getProject(projectId);
    if (project === null) throw new ApiError(404, 'not_found', `No project with id ${projectId}.`);
    return project;
  }
  const route = projectRoutes(api, requireProject);

  api.get('/projects', validQuery(projectsQuerySchema), async (context) => {
    const query = context.req.valid('query');
    // Read first: the page holds at least every change up to it, so a live message of the
    // projects stream carrying this version or an older one is already in the rows.
    const version = await control.projectChangeVersion();
    // Counts are the fleet's, whatever the filter: the status chips show them.
    const [page, { counts, total }] = await Promise.all([
      control.pageProjects(query),
      control.countProjects(),
    ]);
    const fitted = fitRows(
      page.projects.map((project) => projectView(project, hub.activity(project.id))),
      'start',
      options.maxPageBytes,
    );
    const lastShown = page.projects[fitted.rows.length - 1];
    return context.json({
      projects: fitted.rows,
      // A page cut at its byte bound continues right after its last row.
      nextCursor:
        fitted.left > 0 && lastShown !== undefined
          ? projectPageCursor(lastShown, pageSort(query.sort))
          : page.nextCursor,
      counts,
      total,
      version,
    } satisfies Browser.ProjectsPage);
  });

  api.post('/projects', creations, jsonBody, async (context) => {
    // The same two calls as `baton enqueue`: store the project, then queue its first session.
    // `createProject` parses the body with the project schema, once, and refuses it in one line
    // (`invalid project: goal: ...`) exactly as a validator here would.
    const created = await control.createProject(await context.req.json(), {
      sourcePolicy: options.sourcePolicy,
    });
    const queued = await control.enqueue(created.id);
    const project = (await control.getProject(created.id)) ?? created;
    return context.json(
      {
        project: projectView(project, undefined),
        jobId: queued.jobId,
      } satisfies Browser.CreatedProject,
      201,
    );
  });

  route('/projects/:id', {}, async ({ context, projectId, project }) => {
    const [window, transitions, webhooks] = await Promise.all([
      control.pageSessions(projectId, { limit: SESSION_WINDOW }),
      control.listTransitions(projectId),
      control.listWebhookDeliveries(projectId),
    ]);
    const sessions = fitRows(window.sessions, 'end', options.maxPageBytes);
    const sessionsStart = window.startIndex + sessions.left;
    return context.json({
      // The one answer that carries the whole goal.
      project: projectView(project, hub.activity(projectId), 'whole'),
      budgets: project.budgets,
      sessions: sessions.rows,
      sessionsBefore: sessionsStart > 0 ? sessionsStart : null,
      sessionsTotal: window.total,
      transitions,
      webhooks,
    } satisfies Browser.ProjectDetail);
  });

  // The project branch against its base, as the project's remote has it now (read only).
  api.get('/projects/:id/diff', validProjectId, heavy, async (context) => {
    const projectId = context.req.valid('param').id;
    options.telemetry.diffRequest(1);
    try {
      return await branchDiff(context, projectId);
    } finally {
      options.telemetry.diffRequest(-1);
    }
  });

  async function branchDiff(context: Context, projectId: string): Promise<Response> {
    const project = await requireProject(projectId);
    const paths = workspaceGitPaths(options.home, projectId);
    const stat = context.req.query('stat') === '1';
    try {
      const diff = await diffs.run(projectId, stat ? 'stat' : 'full', () => {
        options.telemetry.diffFetch();
        return diffProjectBranch({
          projectId,
          remote: project.repo ?? paths.localRemote,
          baseCommit: project.baseCommit,
          cacheDir: paths.diffCache,
          stat,
        });
      });
      const truncated = diff.text.length > MAX_DIFF_CHARS;
      return context.json({
        ...diff,
        text: truncated ? diff.text.slice(0, MAX_DIFF_CHARS) : diff.text,
        truncated,
        base: project.base,
        baseCommit: project.baseCommit,
      } satisfies Browser.BranchDiff);
    } catch (error) {
      if (error instanceof WorkspaceError) {
        // The git message names host paths (the fetch cache under BATON_HOME): the log has it.
        options.onError(error);
        throw new ApiError(503, 'unavailable', 'Cannot read the project branch right now.');
      }
      throw error;
    }
  }

  /**
   * `POST /projects/:id/<verb>`: the project must exist; the answer is its view after the action,
   * with what the action returned beside it.
   */
  function projectAction(
    verb: string,
    act: (projectId: string) => Promise<Record<string, unknown> | void>,
  ): void {
    api.post(`/projects/:id/${verb}`, validProjectId, async (context) => {
      const projectId = context.req.valid('param').id;
      await requireProject(projectId);
      const result = await act(projectId);
      const project = await requireProject(projectId);
      return context.json({
        project: projectView(project, hub.activity(projectId)),
        ...result,
      } satisfies Browser.ProjectAnswer);
    });
  }

  projectAction('resume', (projectId) => control.resume(projectId).then(() => undefined));
  projectAction('cancel', (projectId) => control.cancel(projectId).then(() => undefined));
  projectAction('pause', async (projectId) => {
    const result = await control.pause(projectId);
    return {
      changed: result.changed,
      removedJobId: result.removedJobId,
      runningSessionId: result.runningSessionId,
    };
  });

  api.post(
    '/projects/:id/say',
    validProjectId,
    jsonBody,
    validJson(guidanceBodySchema, 'guidance'),
    async (context) => {
      const projectId = context.req.valid('param').id;
      const body = context.req.valid('json');
      await requireProject(projectId);
      const { guidance } = await control.say(projectId, body.text);
      return context.json({ guidance } satisfies Browser.GuidanceAnswer, 201);
    },
  );

  route(
    '/projects/:id/sessions',
    { query: sessionsQuerySchema },
    async ({ context, projectId, query }) => {
      const window = await control.pageSessions(projectId, {
        limit: query.limit ?? SESSION_WINDOW,
        beforeIndex: query.before,
      });
      const sessions = fitRows(window.sessions, 'end', options.maxPageBytes);
      const start = window.startIndex + sessions.left;
      return context.json({
        sessions: sessions.rows,
        before: start > 0 ? start : null,
        total: window.total,
      } satisfies Browser.SessionsPage);
    },
  );

  route('/projects/:id/transcripts', {}, async ({ context, projectId }) => {
    return context.json({
      transcripts: await control.listTranscripts(projectId),
    } satisfies Browser.TranscriptList);
  });

  // One session's conversation. Model text also comes rendered from Markdown by the same
  // sanitiser as memory files; everything else the page shows as text.
  route('/projects/:id/transcripts/:sessionId', { gate: heavy }, async ({ context, projectId }) => {
    // The router matched the path: the parameter is there.
    const sessionId = context.req.param('sessionId') ?? '';
    const transcript = await control.readTranscript(projectId, sessionId);
    if (transcript === null) {
      throw new ApiError(404, 'not_found', `No transcript of session ${sessionId} is kept.`);
    }
    return context.json({
      transcript: withRenderedText(transcript),
    } satisfies Browser.TranscriptAnswer);
  });

  route(
    '/projects/:id/search',
    { query: searchQuerySchema, gate: heavy },
    async ({ context, projectId, query }) => {
      const result = await control.search(projectId, query.q, { limit: query.limit });
      return context.json({ query: query.q.trim(), ...result } satisfies Browser.SearchAnswer);
    },
  );

  route(
    '/projects/:id/events',
    { query: eventsQuerySchema },
    async ({ context, projectId, query }) => {
      const limit = query.limit ?? 200;
      const forward = query.after !== undefined;
      const read =
        query.after !== undefined
          ? await control.readEvents(projectId, { fromId: query.after, count: limit })
          : await control.readEvents(projectId, {
              last: limit,
              beforeId: query.before,
            });
      // Forward pages keep their oldest events (continue after the last one shown), backward
      // pages their newest (continue before the first one shown).
      const { rows: events, left } = fitRows(read, forward ? 'start' : 'end', options.maxPageBytes);
      return context.json({
        events,
        lastEventId: events[events.length - 1]?.id ?? query.after ?? null,
        // Where older events start, when there may be some (page backwards with ?before=).
        before: !forward && (read.length === limit || left > 0) ? (events[0]?.id ?? null) : null,
      } satisfies Browser.EventsPage);
    },
  );

  route(
    '/projects/:id/tokens',
    { query: tokensQuerySchema },
    async ({ context, projectId, query }) => {
      const limit = query.limit ?? TOKEN_WINDOW_EVENTS;
      // The latest window of the stream; the chart asks for earlier turns with ?before=.
      const entries = await control.readEvents(projectId, {
        last: limit,
        beforeId: query.before,
      });
      return context.json({
        turns: tokenSeries(entries),
        before: entries.length === limit ? (entries[0]?.id ?? null) : null,
      } satisfies Browser.TokensPage);
    },
  );

  addMemoryRoutes({ control, maxFileBytes: options.maxFileBytes, route });

  /** The project's check report (`baton checks --json`'s shape) as it stands now. */
  async function checksReport(projectId: string) {
    const project = await requireProject(projectId);
    const memory = await control.memoryStore(projectId);
    const [features, checks] = await Promise.all([
      readFeatures(memory),
      control.readChecks(projectId),
    ]);
    return projectChecksReport(project, features, checks);
  }

  // The checklist's badges: every feature's check state and last run, without the output tails,
  // so the answer grows with the features, not with what their checks printed.
  api.get('/projects/:id/checks', validProjectId, async (context) => {
    const report = await checksReport(context.req.valid('param').id);
    return context.json({
      ...report,
      features: report.features.map((row) => ({
        ...row,
        evidence: row.evidence === null ? null : { ...row.evidence, outputTail: undefined },
      })),
    } satisfies Browser.CheckReport);
  });

  // One feature's row with its whole evidence: the output tail a badge shows on demand.
  api.get('/projects/:id/checks/:feature', validProjectId, validFeatureParams, async (context) => {
    const projectId = context.req.valid('param').id;
    const featureId = context.req.param('feature');
    const report = await checksReport(projectId);
    const row = report.features.find((feature) => feature.id === featureId);
    if (row === undefined) {
      throw new ApiError(404, 'not_found', `Project ${projectId} has no feature ${featureId}.`);
    }
    return context.json(row satisfies Browser.CheckRow);
  });

  api.get('/queue', async (context) =>
    context.json({ counts: await control.queueCounts() } satisfies Browser.QueueAnswer),
  );

  // Projects nothing runs (stuck) and what is left of projects Redis lost: the projects page's
  // marker lines (`{ problems, incomplete }`). Read apart from the page of rows: it walks the
  // queued and running projects and scans the project hashes (bounded).
  api.get('/problems', heavy, async (context) =>
    context.json((await control.findProblems()) satisfies Browser.ProjectProblems),
  );

  // The new-project form's preset select: @baton/context-config owns the list.
  api.get('/presets', (context) =>
    context.json({
      presets: CONTEXT_PRESET_NAMES.map((name) => ({ name, intent: CONTEXT_PRESETS[name].intent })),
      default: DEFAULT_CONTEXT_PRESET,
    } satisfies Browser.Presets),
  );

  // Each stream holds memory for as long as it is open: a flood of them is refused, not served.
  let streamsOpen = 0;
  const streamsByAddress = new Map<string, number>();
  function streamSlot(context: Context): SseOptions {
    const address = clientAddress(context);
    const mine = streamsByAddress.get(address) ?? 0;
    if (streamsOpen >= options.streamLimits.total || mine >= options.streamLimits.perAddress) {
      throw new ApiError(503, 'unavailable', 'Too many event streams are open; try again later.');
    }
    streamsOpen++;
    streamsByAddress.set(address, mine + 1);
    let released = false;
    return {
      ...options.sse,
      onClient(change, stream) {
        options.sse.onClient?.(change, stream);
        if (change === 1 || released) return;
        released = true;
        streamsOpen--;
        const left = (streamsByAddress.get(address) ?? 1) - 1;
        if (left <= 0) streamsByAddress.delete(address);
        else streamsByAddress.set(address, left);
      },
    };
  }

  api.get('/stream', (context) => projectsStream(context, streamSlot(context)));

  api.get('/projects/:id/stream', validProjectId, (context) => {
    const projectId = context.req.valid('param').id;
    return projectStream(context, projectId, streamSlot(context));
  });

  return api;
}
