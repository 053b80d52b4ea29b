import { z } from 'zod';
import { ModelSimError } from '../errors.js';
import type { SimFaults, WorkFault } from '../types.js';

const requestNumbers = z.array(z.number().int().min(1));

/** Each `WorkFault` and the per-request fault it stands for. */
const WORK_FAULTS: Readonly<Record<WorkFault, PlannedFault>> = {
  unauthorized: { kind: 'error', status: 401, name: 'unauthorized' },
  forbidden: { kind: 'error', status: 403, name: 'forbidden' },
  rate_limit: { kind: 'error', status: 429, name: 'rate-limit' },
  overloaded: { kind: 'error', status: 529, name: 'overloaded' },
  server_error: { kind: 'error', status: 500, name: 'server-error' },
  cut_stream: { kind: 'cut' },
  stream_error: { kind: 'stream_error' },
  max_tokens: { kind: 'max_tokens' },
  refusal: { kind: 'refusal' },
  pause_turn: { kind: 'pause_turn' },
  context_window_exceeded: { kind: 'context_window' },
  empty_reply: { kind: 'empty_reply' },
};

/** The per-request fault a `WorkFault` stands for. */
export function plannedWorkFault(fault: WorkFault): PlannedFault {
  return WORK_FAULTS[fault];
}

/** Validates faults given by option, `setFaults` or `POST /_sim/faults`. */
const simFaultsSchema = z
  .object({
    latencyMs: z.number().int().min(0).max(600_000).optional(),
    eventDelayMs: z.number().int().min(0).max(60_000).optional(),
    rateLimitOn: requestNumbers.optional(),
    overloadedOn: requestNumbers.optional(),
    serverErrorOn: requestNumbers.optional(),
    overloadedModels: z.array(z.string().min(1).max(200)).optional(),
    alwaysFail: z
      .union([z.literal(500), z.literal(529), z.literal(429), z.literal(401), z.literal(403)])
      .optional(),
    unauthorizedOn: requestNumbers.optional(),
    forbiddenOn: requestNumbers.optional(),
    unknownModels: z.array(z.string().min(1).max(200)).optional(),
    emptyReplyOn: requestNumbers.optional(),
    streamErrorType: z
      .enum([
        'overloaded_error',
        'api_error',
        'rate_limit_error',
        'invalid_request_error',
        'authentication_error',
        'permission_error',
      ])
      .optional(),
    cutStreamOn: requestNumbers.optional(),
    streamErrorOn: requestNumbers.optional(),
    stallOn: requestNumbers.optional(),
    stallNextWork: z.number().int().min(0).max(1_000).optional(),
    nextWorkFaults: z
      .array(z.enum(Object.keys(WORK_FAULTS) as [WorkFault, ...WorkFault[]]))
      .max(1_000)
      .optional(),
    maxTokensOn: requestNumbers.optional(),
    refusalOn: requestNumbers.optional(),
    pauseTurnOn: requestNumbers.optional(),
    contextWindowExceededOn: requestNumbers.optional(),
    retryAfterSeconds: z.number().min(0).max(3600).optional(),
  })
  .strict();

export function parseFaults(input: unknown): SimFaults {
  const result = simFaultsSchema.safeParse(input ?? {});
  if (!result.success) {
    const problems = result.error.issues
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    throw new ModelSimError('invalid_faults', `Invalid simulator faults: ${problems}`);
  }
  // Drop keys zod filled with undefined so the object stays exactOptionalPropertyTypes-clean.
  return Object.fromEntries(
    Object.entries(result.data).filter(([, value]) => value !== undefined),
  ) as SimFaults;
}

/** What happens to request `number`, in order of precedence. */
export type PlannedFault =
  | { kind: 'error'; status: FaultStatus; name: string; message?: string }
  | { kind: 'stall' }
  | { kind: 'cut' }
  | { kind: 'stream_error' }
  | { kind: 'max_tokens' }
  | { kind: 'refusal' }
  | { kind: 'pause_turn' }
  | { kind: 'context_window' }
  | { kind: 'empty_reply' };

/** The statuses a fault can answer with. */
export type FaultStatus = 401 | 403 | 404 | 429 | 500 | 529;

/** Faults that decide the answer before the request is processed (errors and stalls). */
export function faultBefore(
  faults: SimFaults,
  number: number,
  model?: unknown,
): PlannedFault | undefined {
  if (faults.alwaysFail !== undefined) {
    return { kind: 'error', status: faults.alwaysFail, name: `always-${faults.alwaysFail}` };
  }
  if (typeof model === 'string' && faults.unknownModels?.includes(model))
    return { kind: 'error', status: 404, name: 'unknown-model', message: `model: ${model}` };
  if (typeof model === 'string' && faults.overloadedModels?.includes(model))
    return { kind: 'error', status: 529, name: 'overloaded-model' };
  if (faults.unauthorizedOn?.includes(number))
    return { kind: 'error', status: 401, name: 'unauthorized' };
  if (faults.forbiddenOn?.includes(number))
    return { kind: 'error', status: 403, name: 'forbidden' };
  if (faults.stallOn?.includes(number)) return { kind: 'stall' };
  if (faults.rateLimitOn?.includes(number))
    return { kind: 'error', status: 429, name: 'rate-limit' };
  if (faults.overloadedOn?.includes(number))
    return { kind: 'error', status: 529, name: 'overloaded' };
  if (faults.serverErrorOn?.includes(number))
    return { kind: 'error', status: 500, name: 'server-error' };
  return undefined;
}

/** Faults that shape an answer that is otherwise produced normally. */
export function faultAfter(faults: SimFaults, number: number): PlannedFault | undefined {
  if (faults.cutStreamOn?.includes(number)) return { kind: 'cut' };
  if (faults.streamErrorOn?.includes(number)) return { kind: 'stream_error' };
  if (faults.maxTokensOn?.includes(number)) return { kind: 'max_tokens' };
  if (faults.refusalOn?.includes(number)) return { kind: 'refusal' };
  if (faults.pauseTurnOn?.includes(number)) return { kind: 'pause_turn' };
  if (faults.contextWindowExceededOn?.includes(number)) return { kind: 'context_window' };
  if (faults.emptyReplyOn?.includes(number)) return { kind: 'empty_reply' };
  return undefined;
}

/** The API's error type and message for each status a fault answers with (docs.claude.com/en/api/errors). */
export const FAULT_MESSAGES: Record<FaultStatus, { type: string; message: string }> = {
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  403: {
    type: 'permission_error',
    message: 'Your API key does not have permission to use the specified resource.',
  },
  404: { type: 'not_found_error', message: 'The requested resource was not found.' },
  429: {
    type: 'rate_limit_error',
    message: 'Rate limited by the simulator (injected fault). Retry after the retry-after delay.',
  },
  500: { type: 'api_error', message: 'Internal server error (injected fault).' },
  529: { type: 'overloaded_error', message: 'Overloaded (injected fault).' },
};

/**
 * True if a request continues a session's work: its messages hold an assistant turn and no
 * `<baton_end_of_session>` tag (which marks the end-of-session turn).
 */
export function isMidWorkRequest(body: Record<string, unknown>): boolean {
  const messages = body['messages'];
  if (!Array.isArray(messages)) return false;
  const continues = messages.some(
    (message) => (message as { role?: unknown } | null)?.role === 'assistant',
  );
  return continues && !JSON.stringify(messages).includes('<baton_end_of_session');
}
