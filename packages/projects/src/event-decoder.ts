/**
 * The one decoder of project events: every reader (the control API's reads, `baton logs`, the
 * dashboard, the page scripts through the dashboard's API) sees events in the shape these schemas
 * produce. Readers assume the current shape: turns, session starts, session results and check
 * evidence written by earlier versions are upgraded once by a migration
 * (`migrations/event-fields.ts`), and the other event types' fields by a second one
 * (`migrations/event-defaults.ts`), so a field missing from them is malformed here. Anything
 * malformed (not JSON, an unknown type, a missing required field) becomes an
 * `UnknownProjectEvent` that says what was wrong: decoding never throws, so one bad entry never
 * breaks a stream.
 */
import { z } from 'zod';
import { PROJECT_STATUSES, type ProjectStatus } from './project.js';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhooks/payload.js';

// JSON writes NaN and Infinity as null: a count that went wrong reads as 0 rather than making
// the whole event unreadable.
const count = z
  .number()
  .nullable()
  .transform((value) => value ?? 0);
const integer = z.number().int();
const nullableString = z.string().nullable();
const statusSchema = z.enum(PROJECT_STATUSES as [ProjectStatus, ...ProjectStatus[]]);

/** Session totals (`UsageTotals`). */
const usageTotalsSchema = z.looseObject({
  turns: count,
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
  cacheWrite5mInputTokens: count,
  cacheWrite1hInputTokens: count,
  clearedInputTokens: count,
  clearedToolUses: count,
  clearedThinkingTurns: count,
  cacheInvalidatedInputTokens: count,
  costUsd: count,
});

/** One turn's usage (`TurnUsage`), camelCase as the session writes it. */
const turnUsageSchema = z.looseObject({
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
  cacheWrite5mInputTokens: count,
  cacheWrite1hInputTokens: count,
});

/** An applied context edit as the API reports it (its own snake_case names). */
const appliedEditSchema = z.looseObject({ type: z.string(), cleared_input_tokens: count });

const featureCountsSchema = z.looseObject({ passing: count, total: count });

/** One run of a feature's check (`CheckEvidence` of @baton/session). */
const checkEvidenceSchema = z.looseObject({
  featureId: z.string(),
  command: z.string(),
  passed: z.boolean(),
  exitCode: z.number().nullable(),
  stopped: z.enum(['timeout', 'not_started']).optional(),
  durationMs: count,
  outputTail: z.string(),
  commit: nullableString,
  at: count,
  trigger: z.enum(['flip', 'regression']),
  sessionId: z.string(),
});

const featureCheckStateSchema = z.looseObject({
  status: z.enum(['verified', 'claimed', 'regressed', 'refused']),
  evidence: checkEvidenceSchema.nullable(),
});

const sessionResultSchema = z.looseObject({
  sessionId: z.string(),
  kind: z.enum(['init', 'resume', 'end']),
  outcome: z.string(),
  reason: z.string(),
  stopReason: z.string().optional(),
  turns: count,
  usage: usageTotalsSchema,
  featuresBefore: featureCountsSchema,
  featuresAfter: featureCountsSchema,
  allFeaturesPass: z.boolean(),
  flippedFeatures: z.array(z.string()),
  startedAt: count,
  endedAt: count,
  error: z.string().optional(),
  /** The end-of-session checkpoint: whether its head reached the remote is read by the views. */
  checkpoint: z
    .looseObject({ head: z.string().nullable().optional(), pushed: z.boolean().optional() })
    .optional(),
  checkpointError: z.string().optional(),
  checkpointFailures: count.optional(),
  commits: z.array(z.string()),
  progressEntry: z.enum(['agent', 'baton', 'none']),
  fallback: z
    .looseObject({ from: z.string(), to: z.string(), turn: integer, at: z.number() })
    .optional(),
  /** Absent with verification off. */
  checks: z.record(z.string(), featureCheckStateSchema).optional(),
  /** Absent with verification off. */
  verification: z
    .looseObject({
      verified: count,
      claimed: count,
      regressed: count,
      unverified: count,
      pending: count,
      regressedIds: z.array(z.string()),
      rerun: count,
      rerunMs: count,
    })
    .optional(),
});

const eventBase = { v: z.literal(1), at: z.number(), projectId: z.string() };
const sessionBase = { ...eventBase, sessionId: z.string() };
const sessionRunBase = {
  ...eventBase,
  sessionId: z.string(),
  sessionNumber: integer,
  jobId: z.string(),
  workerId: z.string(),
};

const sessionEventSchemas = [
  z.looseObject({
    ...sessionBase,
    type: z.literal('session-start'),
    kind: z.enum(['init', 'resume', 'end']),
    sessionNumber: integer,
    interrupted: z.boolean(),
    model: z.string(),
    sandbox: z.looseObject({ mode: z.enum(['bubblewrap', 'off']) }),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('turn'),
    turn: integer,
    model: z.string(),
    responseModel: z.string(),
    /** Absent in events recorded before traces (no migration can know it). */
    responseId: z.string().optional(),
    phase: z.enum(['work', 'end']),
    stopReason: z.string(),
    durationMs: count,
    usage: turnUsageSchema,
    appliedEdits: z.array(appliedEditSchema),
    clearedInputTokens: count,
    cacheInvalidation: z
      .looseObject({
        rewrittenInputTokens: count,
        costUsd: count,
        // A clear that never pays for itself is Infinity, which JSON writes as null.
        breakEvenRequests: z
          .number()
          .nullable()
          .transform((value) => value ?? Number.POSITIVE_INFINITY),
      })
      .nullable(),
    costUsd: count,
    totals: usageTotalsSchema,
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('tool-call'),
    turn: integer,
    tool: z.string(),
    toolUseId: z.string().optional(),
    summary: z.string(),
    isError: z.boolean(),
    limit: z.string().optional(),
    durationMs: count,
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('memory-change'),
    change: z.looseObject({
      command: z.string(),
      path: z.string(),
      newPath: z.string().optional(),
      bytes: count,
      at: count,
      session: z.string().optional(),
    }),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('mcp-server'),
    server: z.string(),
    source: z.enum(['worker', 'repository', 'project']),
    transport: z.enum(['stdio', 'http']),
    state: z.enum(['ready', 'failed', 'exited']),
    tools: z.array(z.string()),
    message: z.string().optional(),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('model-fallback'),
    from: z.string(),
    to: z.string(),
    turn: integer,
    status: z.number().optional(),
    message: z.string(),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('context-full'),
    turn: integer,
    cause: z.enum(['counter', 'prompt_too_long', 'stop_reason']),
    promptTokens: z.number().nullable(),
    contextWindow: z.number().nullable(),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('empty-reply'),
    turn: integer,
    nudged: z.boolean(),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('api-retry'),
    attempt: integer,
    status: z.number().optional(),
    delayMs: count,
    message: z.string(),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('checkpoint'),
    reason: z.enum(['turn', 'memory', 'end']),
    commit: nullableString,
    head: nullableString,
    pushed: z.boolean(),
    hooks: z.enum(['passed', 'refused', 'skipped', 'none']),
    skipped: z.array(z.string()),
    tooLarge: z.array(z.looseObject({ path: z.string(), bytes: count })).optional(),
    special: z
      .array(
        z.looseObject({
          path: z.string(),
          kind: z.enum(['fifo', 'socket', 'device', 'refused-name']),
        }),
      )
      .optional(),
    error: z.string().optional(),
    replacedStale: z
      .looseObject({
        tip: z.string(),
        fence: count,
        commits: count,
        keptOn: z.string(),
      })
      .optional(),
  }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('guidance-delivered'),
    guidanceIds: z.array(z.string()),
    turn: integer,
    inFirstMessage: z.boolean(),
  }),
  z.looseObject({ ...sessionBase, type: z.literal('check-passed'), evidence: checkEvidenceSchema }),
  z.looseObject({ ...sessionBase, type: z.literal('check-failed'), evidence: checkEvidenceSchema }),
  z.looseObject({
    ...sessionBase,
    type: z.literal('feature-regressed'),
    featureId: z.string(),
    evidence: checkEvidenceSchema,
  }),
  z.looseObject({ ...sessionBase, type: z.literal('session-end'), result: sessionResultSchema }),
] as const;

const workerEventSchemas = [
  z.looseObject({
    ...eventBase,
    type: z.literal('project-status'),
    from: statusSchema.nullable(),
    to: statusSchema,
    reason: nullableString,
    budgetReached: z.literal(true).optional(),
  }),
  z.looseObject({
    ...eventBase,
    type: z.literal('session-queued'),
    sessionNumber: integer,
    jobId: z.string(),
    delayMs: count,
    reason: z.string(),
  }),
  z.looseObject({ ...sessionRunBase, type: z.literal('session-interrupted') }),
  z.looseObject({
    ...sessionRunBase,
    type: z.literal('session-claimed'),
    interrupted: z.boolean(),
  }),
  z.looseObject({
    ...eventBase,
    type: z.literal('project-paused'),
    by: z.literal('operator'),
    runningSessionId: nullableString,
    removedJobId: nullableString,
  }),
  z.looseObject({
    ...eventBase,
    type: z.literal('guidance-sent'),
    guidanceId: z.string(),
    text: z.string(),
    runningSessionId: nullableString,
  }),
  z.looseObject({
    ...sessionRunBase,
    type: z.literal('workspace-prepared'),
    branch: z.string(),
    head: nullableString,
    remoteHead: nullableString,
    recovered: z.boolean(),
  }),
  z.looseObject({
    ...sessionRunBase,
    type: z.literal('memory-snapshot'),
    commit: nullableString,
    pushed: z.boolean(),
    withheld: z.array(z.looseObject({ path: z.string(), reason: z.string() })),
    error: z.string().optional(),
  }),
  z.looseObject({
    ...sessionRunBase,
    type: z.literal('session-released'),
    outcome: z.string(),
  }),
  z.looseObject({
    ...eventBase,
    type: z.literal('webhook-delivery'),
    notificationId: z.string(),
    webhookType: z.enum(WEBHOOK_EVENT_TYPES as [WebhookEventType, ...WebhookEventType[]]),
    target: z.string(),
    ok: z.boolean(),
    attempts: integer,
    status: z.number().optional(),
    error: z.string().optional(),
  }),
] as const;

const knownEventSchema = z.discriminatedUnion('type', [
  ...sessionEventSchemas,
  ...workerEventSchemas,
]);

/** Every event type the decoder knows, in the order of the schemas. */
export const PROJECT_EVENT_TYPES = knownEventSchema.options.map(
  (schema) => schema.shape.type.value,
) as ReadonlyArray<KnownProjectEvent['type']>;

/**
 * The schemas' output without their index signatures: the decoder keeps fields it does not know
 * (a newer writer's), but readers only see the fields named here, and the events writers emit
 * (interfaces, without index signatures) stay assignable to it.
 */
type Declared<T> = T extends readonly (infer Item)[]
  ? Declared<Item>[]
  : T extends object
    ? { [K in keyof T as string extends K ? never : K]: Declared<T[K]> }
    : T;

/** A decoded event of a known type (a session's own or the worker's). */
export type KnownProjectEvent = Declared<z.output<typeof knownEventSchema>>;

/** An entry the decoder could not read: kept (with what was wrong) so a stream reads on. */
export interface UnknownProjectEvent {
  type: 'unknown';
  v: number;
  /** The entry's own `at` if it had one, else 0. */
  at: number;
  /** The entry's own `projectId` if it had one, else ''. */
  projectId: string;
  /** The entry's `type` if it had a string one. */
  originalType: string | null;
  /** One line: what made it unreadable (`not JSON`, `unknown event type`, a field's issue). */
  problem: string;
  /** The entry as read (the parsed JSON, or the text when it was not JSON). */
  raw: unknown;
}

/** Any event read from a project's stream or a local events file. */
export type ProjectEvent = KnownProjectEvent | UnknownProjectEvent;

/** The decoded event of type `T`. */
export type ProjectEventOf<T extends ProjectEvent['type']> = Extract<ProjectEvent, { type: T }>;

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

function unknownEvent(raw: unknown, problem: string): UnknownProjectEvent {
  const at = field(raw, 'at');
  const projectId = field(raw, 'projectId');
  const type = field(raw, 'type');
  const v = field(raw, 'v');
  return {
    type: 'unknown',
    v: typeof v === 'number' ? v : 0,
    at: typeof at === 'number' && Number.isFinite(at) ? at : 0,
    projectId: typeof projectId === 'string' ? projectId : '',
    originalType: typeof type === 'string' ? type : null,
    problem,
    raw,
  };
}

const KNOWN_TYPES = new Set<string>(PROJECT_EVENT_TYPES);

/** Decodes one event (a parsed JSON value). Never throws. */
export function decodeProjectEvent(value: unknown): ProjectEvent {
  const type = field(value, 'type');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return unknownEvent(value, 'not an object');
  }
  if (typeof type !== 'string') return unknownEvent(value, 'type: missing');
  if (!KNOWN_TYPES.has(type)) return unknownEvent(value, `unknown event type ${type}`);
  const result = knownEventSchema.safeParse(value);
  if (result.success) return result.data as KnownProjectEvent;
  const issue = result.error.issues[0];
  const key = issue === undefined || issue.path.length === 0 ? 'event' : issue.path.join('.');
  return unknownEvent(value, `${key}: ${issue?.message ?? 'invalid'}`);
}

/** Decodes one event from its JSON text (a stream entry, a line of a local events file). */
export function decodeProjectEventJson(text: string): ProjectEvent {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return unknownEvent(text, 'not JSON');
  }
  return decodeProjectEvent(value);
}
