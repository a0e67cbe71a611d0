/** The six event kinds a webhook can subscribe to (SPEC §5). */
export const SUBSCRIPTION_EVENTS = [
  'job.started',
  'job.completed',
  'follower.gained',
  'follower.lost',
  'operation.complete',
  'operation.failed',
] as const;
export type SubscriptionEvent = (typeof SUBSCRIPTION_EVENTS)[number];

/** Sent only by POST /api/webhooks/:id/test, whatever the webhook subscribes to. */
export const TEST_EVENT = 'webhook.test';

export function isSubscriptionEvent(value: unknown): value is SubscriptionEvent {
  return (SUBSCRIPTION_EVENTS as readonly unknown[]).includes(value);
}

/** What an event (and its deliveries) can be: a subscription event, or the test event. */
export type EventKind = SubscriptionEvent | typeof TEST_EVENT;
