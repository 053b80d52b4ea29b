import { expect, it } from 'vitest';
import { buildWebhookPayload, webhookEventType } from './payload.js';

it.each([
  [{ to: 'completed' }, 'project.completed'],
  [{ to: 'failed' }, 'project.failed'],
  [{ to: 'cancelled' }, 'project.cancelled'],
  [{ to: 'paused' }, 'project.paused'],
  [{ to: 'paused', budgetReached: true }, 'project.budget_reached'],
  [{ to: 'running' }, null],
  [{ to: 'queued' }, null],
])('status change %j is notified as %s', (trigger, type) => {
  expect(webhookEventType(trigger)).toBe(type);
});

it('the body carries id, status, reason, features, tokens and USD', () => {
  const payload = buildWebhookPayload(
    'n1',
    'project.budget_reached',
    {
      projectId: 'p1',
      to: 'paused',
      reason: 'budget: $1.2 spent of $1',
      at: 0,
      budgetReached: true,
    },
    {
      id: 'p1',
      status: 'paused',
      statusReason: 'x',
      featuresPassing: 2,
      featuresTotal: 5,
      featuresVerified: 1,
      featuresClaimed: 1,
      featuresRegressed: 1,
      inputTokens: 1000,
      outputTokens: 200,
      costUsd: 1.23456789,
    },
  );
  expect(payload).toEqual({
    type: 'project.budget_reached',
    id: 'n1',
    at: '1970-01-01T00:00:00.000Z',
    project: {
      id: 'p1',
      status: 'paused',
      reason: 'budget: $1.2 spent of $1',
      features: { passing: 2, total: 5, verified: 1, claimed: 1, regressed: 1 },
      tokens: { input: 1000, output: 200, total: 1200 },
      usd: 1.234568,
    },
  });
});
