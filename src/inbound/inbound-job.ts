import { newRowId } from '../database/row-id';
import type { EventSource } from '../delivery-record/delivery-body';
import { orderKeyOf } from '../dispatcher/publish/order-key';
import { JOBS, JobSpec, recordJob } from '../queue/queue.constants';
import { SubscriptionEvent } from '../webhooks/subscription-events';
import { InboundEventEntity } from './inbound-event.entity';
import { VIA, type InboundVia } from '../common/inbound-via';
import { EventData, PlatformObject, asRecord, mappingRuleOf } from './event-mapping';
import type { PlatformEnvelope } from './platform-envelope';

/** Job data on the inbound and recordings queues: the stored event is read back from PostgreSQL. */
export interface InboundJobData {
  inboundEventId: string;
}

/**
 * `payload` of a stored event as the platform sent it, whatever it is (null, a string, an
 * array: docs/receiving.md); its numbers keep their own text (PreciseNumber). An event sent
 * without one has JSON's nearest: null (a notification always carries `data`).
 */
export function platformPayloadAsSent(row: InboundEventEntity): unknown {
  return row.payload.payload ?? null;
}

/** `payload` of a stored event as an object to read fields from ({} when it is not one). */
export function platformPayloadOf(row: InboundEventEntity): PlatformObject {
  return asRecord(row.payload.payload);
}

/** `payload.object` of a stored event. */
export function platformObjectOf(row: InboundEventEntity): PlatformObject {
  return asRecord(platformPayloadOf(row).object);
}

/** What a notification's `source` is made of: the platform event as it arrived. */
export interface SourceFacts {
  event: string;
  eventTs: number | null;
  accountId: string | null;
  trackingId: string | null;
  /** When it arrived: stands in for an event_ts the platform did not send. */
  receivedAt: Date;
  via: InboundVia;
}

/**
 * `source` of the notifications an inbound event causes (docs/api.md#notifications): the one builder, whether
 * the notification is published as the event is stored or later by its job.
 */
export function notificationSource(facts: SourceFacts): EventSource {
  return {
    platform: 'zoom',
    event: facts.event,
    event_ts: facts.eventTs ?? facts.receivedAt.getTime(),
    account_id: facts.accountId ?? '',
    tracking_id: facts.trackingId,
    via: facts.via,
  };
}

/** `source` of the notifications a stored inbound event causes. */
export function sourceOf(row: InboundEventEntity): EventSource {
  return notificationSource({
    event: row.event,
    eventTs: row.eventTs === null ? null : Number(row.eventTs),
    accountId: row.accountId,
    trackingId: row.trackingId,
    receivedAt: row.receivedAt,
    // Rows stored before `via` existed came by webhook.
    via: row.via ?? VIA.webhook,
  });
}

/** A notification published in the statement that stores its inbound event. */
export interface InlineEvent {
  id: string;
  kind: SubscriptionEvent;
  createdAt: Date;
  data: EventData;
  source: EventSource;
  /** The platform object's uuid: its deliveries to ordered webhooks keep its order (docs/receiving.md#ordered-delivery-per-meeting). */
  orderKey?: string | null;
}

/**
 * What the statement that stores an inbound event does with it: `done`, nothing more (no
 * route: it is the record only); `queue`, leave it unprocessed for the inbound queue (the
 * recording automation, the approval rules); `publish`, publish `event` with its deliveries as
 * well, unless it reaches more than INLINE_FANOUT_MAX active webhooks (then as `queue`).
 * Whatever the plan, an event some active webhook subscribes to as it is (`zoom.<event>` or
 * `zoom.*`) is left unprocessed too: the inbound job publishes it as it is.
 */
export type IngestPlan =
  { then: 'done' } | { then: 'queue' } | { then: 'publish'; event: InlineEvent };

/**
 * The plan of an event being stored (IngestPlan): a mapped event is published with it, its
 * notification built here; a recording event, and a registration event (the approval rules
 * look at what was published before), is left to the job; any other is the record only (the
 * statement still leaves it to the job when a webhook takes it as it is). `arrival`: what the
 * notification's `source` says of it besides its name.
 */
export function ingestPlan(
  envelope: PlatformEnvelope,
  unmappable: string | null,
  arrival: Omit<SourceFacts, 'event' | 'receivedAt'>,
): IngestPlan {
  const rule = mappingRuleOf(envelope.event);
  // Nothing to map (or nothing that can be): the record, and the as-it-came delivery.
  if (!rule || unmappable !== null) return { then: 'done' };
  if ('automation' in rule || rule.approval) return { then: 'queue' };
  const createdAt = new Date();
  const source = notificationSource({ event: envelope.event, receivedAt: createdAt, ...arrival });
  const object = asRecord(asRecord(envelope.payload).object);
  return {
    then: 'publish',
    event: {
      id: newRowId(),
      kind: rule.kind,
      createdAt,
      data: rule.data(object),
      orderKey: orderKeyOf(object),
      source,
    },
  };
}

/**
 * The idempotency key of a notification an inbound event causes: one per event and `what`
 * (a kind it maps to, `as-is` for the platform event as it is, `operation` for the recording
 * automation's outcome), however often its job runs: publish() with the same key is the same
 * event, with no second fan-out. The ingest statement, the inbound job and the fakes all use it.
 */
export function inboundEventKey(
  inboundEventId: string,
  what: SubscriptionEvent | 'as-is' | 'operation',
): string {
  return `inbound:${inboundEventId}:${what}`;
}

/** The key of the notification of `kind` an inbound event maps to. */
export function publishKey(row: InboundEventEntity, kind: SubscriptionEvent): string {
  return inboundEventKey(row.id, kind);
}

/** The platform event as it is (`zoom.<event>`): one per inbound event. */
export function asIsKey(row: InboundEventEntity): string {
  return inboundEventKey(row.id, 'as-is');
}

/**
 * The recording automation's outcome: operation.complete and operation.failed share one key
 * per inbound event, so a run that publishes one after an earlier run published the other
 * (the event re-queued because marking it processed failed) adds nothing: the first stands.
 */
export function automationOutcomeKey(row: InboundEventEntity): string {
  return inboundEventKey(row.id, 'operation');
}

/** The inbound queue's job for a stored event, under the event's id. */
export function inboundJob(inboundEventId: string): JobSpec<InboundJobData> {
  return recordJob(JOBS.processInbound, inboundEventId, { inboundEventId });
}

/** The recordings queue's job for a stored recording event, under the event's id. */
export function recordingJob(inboundEventId: string): JobSpec<InboundJobData> {
  return recordJob(JOBS.recordingAutomation, inboundEventId, { inboundEventId });
}
