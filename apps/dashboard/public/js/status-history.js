// The project page's status history and webhook deliveries. Reads nothing itself: both come with
// the project view (GET /api/projects/:id, its `transitions` and `webhooks`).
import { h, replace } from './dom.js';
import { describeDelivery } from './event-list.js';
import { formatDateTime } from './format.js';

/** createStatusHistory() -> { transitions, webhooks, show(detail) }: one element per card. */
export function createStatusHistory() {
  const transitions = h('ol', { class: 'transitions' });
  const webhooks = h('ol', { class: 'webhooks', dataset: { testid: 'webhook-deliveries' } });

  /** @param {Pick<import('./api-types.js').ProjectDetail, 'transitions' | 'webhooks'>} detail */
  function show(detail) {
    replace(
      transitions,
      detail.transitions.map((transition) =>
        h(
          'li',
          {},
          h('time', {}, formatDateTime(transition.at)),
          ` ${transition.from ?? '–'} → ${transition.to}`,
          transition.reason ? `: ${transition.reason}` : '',
        ),
      ),
    );
    const deliveries = detail.webhooks ?? [];
    replace(
      webhooks,
      deliveries.length === 0
        ? h('p', { class: 'muted' }, 'No webhook deliveries.')
        : deliveries.map((delivery) =>
            h(
              'li',
              { class: delivery.ok ? 'delivered' : 'failed' },
              h('time', {}, formatDateTime(delivery.at)),
              ` ${describeDelivery(delivery)}`,
            ),
          ),
    );
  }

  return { transitions, webhooks, show };
}
