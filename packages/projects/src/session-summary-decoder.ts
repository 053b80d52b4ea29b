/**
 * The one decoder of stored session summaries (the Redis list `<prefix>:<id>:sessions`, a local
 * project's `sessions.jsonl`), as `event-decoder.ts` is of events: readers assume the current
 * shape (what earlier versions stored is upgraded once by the summary migrations), so a summary
 * missing a field (one an old process wrote after the upgrade, say) is malformed here. A malformed
 * one is read as a row of its own, outcome `malformed`, that says what was wrong: decoding never
 * throws, so one bad summary never breaks `baton status ID` or the dashboard's session table.
 */
import { z } from 'zod';
import type { SessionSummary } from './project-log.js';

const count = z.number();
const featureCounts = z.looseObject({ passing: count, total: count });

const sessionSummarySchema = z.looseObject({
  sessionId: z.string(),
  sessionNumber: count,
  kind: z.string(),
  outcome: z.string(),
  reason: z.string(),
  interrupted: z.boolean(),
  turns: count,
  inputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
  outputTokens: count,
  clearedInputTokens: count,
  costUsd: count,
  featuresBefore: featureCounts,
  featuresAfter: featureCounts,
  flippedFeatures: z.array(z.string()),
  startedAt: count,
  endedAt: count,
  jobId: z.string(),
  workerId: z.string(),
  error: z.string().optional(),
  commits: z.array(z.string()),
  checkpoint: z
    .looseObject({
      head: z.string().nullable(),
      pushed: z.boolean(),
      hooks: z.enum(['passed', 'refused', 'skipped', 'none']),
      skipped: z.array(z.string()),
    })
    .optional(),
  verification: z
    .looseObject({ pending: count, regressedIds: z.array(z.string()), rerun: count })
    .optional(),
  checkpointError: z.string().optional(),
  checkpointFailures: count.optional(),
  replacedStale: z
    .array(z.looseObject({ tip: z.string(), fence: count, commits: count, keptOn: z.string() }))
    .optional(),
  model: z.string(),
  fallback: z.looseObject({ from: z.string(), to: z.string(), turn: count, at: count }).optional(),
  mcp: z.array(z.looseObject({ server: z.string(), state: z.string(), tools: count })).optional(),
});

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null
    ? (value as Record<string, unknown>)[key]
    : undefined;
}

/** The row a summary that could not be decoded reads as: its id and number if it had them. */
function malformedSummary(raw: unknown, problem: string): SessionSummary {
  const sessionId = field(raw, 'sessionId');
  const sessionNumber = field(raw, 'sessionNumber');
  const noFeatures = { passing: 0, total: 0 };
  return {
    sessionId: typeof sessionId === 'string' ? sessionId : '',
    sessionNumber:
      typeof sessionNumber === 'number' && Number.isFinite(sessionNumber) ? sessionNumber : 0,
    kind: 'unknown',
    outcome: 'malformed',
    reason: `stored session summary is malformed (${problem})`,
    interrupted: false,
    turns: 0,
    inputTokens: 0,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
    outputTokens: 0,
    clearedInputTokens: 0,
    costUsd: 0,
    featuresBefore: noFeatures,
    featuresAfter: { ...noFeatures },
    flippedFeatures: [],
    startedAt: 0,
    endedAt: 0,
    jobId: '',
    workerId: '',
    commits: [],
    model: 'unrecorded',
    malformed: problem,
  };
}

/** Decodes one stored summary from its JSON text. Never throws. */
export function decodeSessionSummaryJson(text: string): SessionSummary {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    return malformedSummary(undefined, 'not JSON');
  }
  const result = sessionSummarySchema.safeParse(value);
  // The schema checks what readers use; the type names every field.
  if (result.success) return result.data as unknown as SessionSummary;
  const issue = result.error.issues[0];
  const key = issue === undefined || issue.path.length === 0 ? 'summary' : issue.path.join('.');
  return malformedSummary(value, `${key}: ${issue?.message ?? 'invalid'}`);
}
