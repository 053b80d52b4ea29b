import type { ProjectRecord } from '../project.js';

/** What a webhook tells: a project reached one of these. */
export type WebhookEventType =
  | 'project.completed'
  | 'project.failed'
  | 'project.paused'
  | 'project.cancelled'
  | 'project.budget_reached'
  | 'feature.regressed';

export const WEBHOOK_EVENT_TYPES: readonly WebhookEventType[] = [
  'project.completed',
  'project.failed',
  'project.paused',
  'project.cancelled',
  'project.budget_reached',
  'feature.regressed',
];

/** Most characters of a regressed check's output a webhook carries (its last ones). */
export const WEBHOOK_OUTPUT_CHARS = 500;

/** A feature Baton set back to failing because its check failed on a re-run. */
export interface RegressedFeature {
  id: string;
  /** The check that failed. */
  check: string;
  exitCode: number | null;
  /** The commit it failed on. */
  commit: string | null;
  /** The last characters of its output (at most `WEBHOOK_OUTPUT_CHARS`), redacted. */
  output: string;
}

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
  /** Not a status change: this feature regressed (`feature.regressed`; `to` is the status then). */
  regressed?: RegressedFeature;
}

/** The project figures a payload reports, read when the notification is built. */
export interface WebhookProjectSnapshot {
  id: string;
  status: string;
  statusReason: string | null;
  featuresPassing: number;
  featuresTotal: number;
  featuresVerified: number;
  featuresClaimed: number;
  featuresRegressed: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** A project's figures as a payload reports them. */
export function webhookProjectSnapshot(project: ProjectRecord): WebhookProjectSnapshot {
  const counters = project.counters;
  return {
    id: project.id,
    status: project.status,
    statusReason: project.statusReason,
    featuresPassing: counters.featuresPassing,
    featuresTotal: counters.featuresTotal,
    featuresVerified: counters.featuresVerified,
    featuresClaimed: counters.featuresClaimed,
    featuresRegressed: counters.featuresRegressed,
    inputTokens: counters.inputTokens,
    outputTokens: counters.outputTokens,
    costUsd: counters.costUsd,
  };
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
    /** Passing and total features; of the passing ones, verified and claimed; regressed ones. */
    features: {
      passing: number;
      total: number;
      verified: number;
      claimed: number;
      regressed: number;
    };
    tokens: { input: number; output: number; total: number };
    usd: number;
  };
  /** `feature.regressed` only: the feature and the evidence of the check that failed. */
  feature?: RegressedFeature | undefined;
}

/** The webhook type of a status change, or null if that change is not notified (queued, running). */
export function webhookEventType(
  trigger: Pick<WebhookTrigger, 'to' | 'budgetReached' | 'regressed'>,
): WebhookEventType | null {
  if (trigger.regressed !== undefined) return 'feature.regressed';
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
      features: {
        passing: project.featuresPassing,
        total: project.featuresTotal,
        verified: project.featuresVerified,
        claimed: project.featuresClaimed,
        regressed: project.featuresRegressed,
      },
      tokens: {
        input: project.inputTokens,
        output: project.outputTokens,
        total: project.inputTokens + project.outputTokens,
      },
      usd: Math.round(project.costUsd * 1e6) / 1e6,
    },
    feature: trigger.regressed,
  };
}
