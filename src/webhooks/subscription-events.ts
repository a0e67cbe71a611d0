/** The six event kinds a webhook can subscribe to (docs/api.md#platform-events-post-zoomevents). */
export const SUBSCRIPTION_EVENTS = [
  'job.started',
  'job.completed',
  'follower.gained',
  'follower.lost',
  'operation.complete',
  'operation.failed',
] as const;
export type SubscriptionEvent = (typeof SUBSCRIPTION_EVENTS)[number];

/**
 * The service's own operational events (docs/operations.md): about a client's webhooks, sent to that
 * client's other webhooks that subscribe to them; and bridge.reconciliation.completed, sent to
 * the subscribed webhooks of clients holding bridge:admin (docs/reconciliation.md); and the
 * bridge.account.* events, sent to the client that installed the account (docs/accounts.md).
 */
export const OPERATIONAL_EVENTS = [
  'bridge.webhook.disabled',
  'bridge.delivery.failed',
  'bridge.reconciliation.completed',
  'bridge.account.disconnected',
  'bridge.account.deauthorized',
] as const;
export type OperationalEvent = (typeof OPERATIONAL_EVENTS)[number];

export function isOperationalEvent(value: unknown): value is OperationalEvent {
  return (OPERATIONAL_EVENTS as readonly unknown[]).includes(value);
}

/**
 * Kinds the service computes from the platform's events rather than maps one to one:
 * `meeting.attendance` once an occurrence has ended and settled (docs/attendance.md).
 */
export const COMPUTED_EVENTS = ['meeting.attendance'] as const;
export type ComputedEvent = (typeof COMPUTED_EVENTS)[number];
export const ATTENDANCE_EVENT: ComputedEvent = 'meeting.attendance';

export function isComputedEvent(value: unknown): value is ComputedEvent {
  return (COMPUTED_EVENTS as readonly unknown[]).includes(value);
}

/** Sent only by POST /api/webhooks/:id/test, whatever the webhook subscribes to. */
export const TEST_EVENT = 'webhook.test';

export function isSubscriptionEvent(value: unknown): value is SubscriptionEvent {
  return (SUBSCRIPTION_EVENTS as readonly unknown[]).includes(value);
}

/**
 * A platform event as it is (docs/api.md#platform-events-post-zoomevents): `zoom.` + the platform's event name, delivered with the
 * platform's payload as `data`.
 */
export type PlatformEventKind = `zoom.${string}`;
export const PLATFORM_EVENT_PATTERN = /^zoom\.[a-z0-9_]+\.[a-z0-9_]+$/;
/** Subscribes to every platform event as it is (but endpoint.url_validation, never delivered). */
export const ALL_PLATFORM_EVENTS = 'zoom.*';

export function isPlatformEventKind(value: unknown): value is PlatformEventKind {
  return typeof value === 'string' && PLATFORM_EVENT_PATTERN.test(value);
}

/** The kind a platform event is delivered as, or null for a name outside the pattern. */
export function platformEventKind(event: string): PlatformEventKind | null {
  const kind = `zoom.${event}`;
  return isPlatformEventKind(kind) ? kind : null;
}

/**
 * What a webhook's `events` may list: a subscription event, a computed one, an operational
 * event, `zoom.*` or `zoom.<event>`.
 */
export type Subscription =
  | SubscriptionEvent
  | ComputedEvent
  | OperationalEvent
  | typeof ALL_PLATFORM_EVENTS
  | PlatformEventKind;

export function isSubscription(value: unknown): value is Subscription {
  return (
    isSubscriptionEvent(value) ||
    isComputedEvent(value) ||
    isOperationalEvent(value) ||
    value === ALL_PLATFORM_EVENTS ||
    isPlatformEventKind(value)
  );
}

/** What publish() takes: a subscription event, a computed one, or a platform event as it is. */
export type PublishedKind = SubscriptionEvent | ComputedEvent | PlatformEventKind;

export function isPublishedKind(value: unknown): value is PublishedKind {
  return isSubscriptionEvent(value) || isComputedEvent(value) || isPlatformEventKind(value);
}

/**
 * The subscriptions that receive an event of `kind`: the kind itself, and `zoom.*` for a
 * platform event. A webhook listing several of them still gets one delivery.
 */
export function subscriptionsFor(kind: string): string[] {
  return isPlatformEventKind(kind) ? [kind, ALL_PLATFORM_EVENTS] : [kind];
}

/** What an event (and its deliveries) can be: a published kind, an operational one, or the test. */
export type EventKind = PublishedKind | OperationalEvent | typeof TEST_EVENT;
