/** What a webhook tells: a project reached one of these. */
export type WebhookEventType =
  | 'project.completed'
  | 'project.failed'
  | 'project.paused'
  | 'project.cancelled'
  | 'project.budget_reached';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'project.completed',
  'project.failed',
  'project.paused',
  'project.cancelled',
  'project.budget_reached',
];

/** A status change as the webhook trigger sees it. */
export interface WebhookTrigger {
  projectId: string;
  /** The status the project moved to. */
  to: string;
  reason: string | null;
  /** When it moved (epoch ms). */
  at: number;
  /** The move was a pause because a project budget was used up. */
  budgetReached?: boolean;
}

/** The project figures a payload reports, read when the notification is built. */
export interface WebhookProjectSnapshot {
  id: string;
  status: string;
  statusReason: string | null;
  featuresPassing: number;
  featuresTotal: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The JSON body of every webhook. */
export interface WebhookPayload {
  type: WebhookEventType;
  /** Unique per notification; retries of one delivery repeat it (receivers deduplicate on it). */
  id: string;
  /** ISO time of the status change. */
  at: string;
  project: {
    id: string;
    status: string;
    reason: string | null;
    features: { passing: number; total: number };
    tokens: { input: number; output: number; total: number };
    usd: number;
  };
}

/** The webhook type of a status change, or null if that change is not notified (queued, running). */
export function webhookEventType(
  trigger: Pick<WebhookTrigger, 'to' | 'budgetReached'>,
): WebhookEventType | null {
  switch (trigger.to) {
    case 'completed':
      return 'project.completed';
    case 'failed':
      return 'project.failed';
    case 'cancelled':
      return 'project.cancelled';
    case 'paused':
      return trigger.budgetReached === true ? 'project.budget_reached' : 'project.paused';
    default:
      return null;
  }
}

/** The body sent for `trigger`, with the project's figures at the time it is built. */
export function buildWebhookPayload(
  id: string,
  type: WebhookEventType,
  trigger: WebhookTrigger,
  project: WebhookProjectSnapshot,
): WebhookPayload {
  return {
    type,
    id,
    at: new Date(trigger.at).toISOString(),
    project: {
      id: project.id,
      status: trigger.to,
      reason: trigger.reason,
      features: { passing: project.featuresPassing, total: project.featuresTotal },
      tokens: {
        input: project.inputTokens,
        output: project.outputTokens,
        total: project.inputTokens + project.outputTokens,
      },
      usd: Math.round(project.costUsd * 1e6) / 1e6,
    },
  };
}
