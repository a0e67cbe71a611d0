import type { EventSource } from '../dispatcher/delivery-body';
import { JOBS, JobSpec, recordJob } from '../queue/queue.constants';
import { SubscriptionEvent } from '../webhooks/subscription-events';
import { InboundEventEntity } from './inbound-event.entity';
import { PlatformObject, asRecord } from './event-mapping';

/** Job data on the inbound and recordings queues: the stored event is read back from PostgreSQL. */
export interface InboundJobData {
  inboundEventId: string;
}

/** `payload` of a stored event (its payload column holds the whole envelope). */
export function platformPayloadOf(row: InboundEventEntity): PlatformObject {
  return asRecord(row.payload.payload);
}

/** `payload.object` of a stored event. */
export function platformObjectOf(row: InboundEventEntity): PlatformObject {
  return asRecord(platformPayloadOf(row).object);
}

/** `source` of the notifications an inbound event causes (SPEC §4). */
export function sourceOf(row: InboundEventEntity): EventSource {
  return {
    platform: 'zoom',
    event: row.event,
    event_ts: row.eventTs === null ? row.receivedAt.getTime() : Number(row.eventTs),
    account_id: row.accountId ?? '',
    tracking_id: row.trackingId,
  };
}

/**
 * One notification per inbound event and kind, however often its job runs: publish() with the
 * same key is the same event, with no second fan-out.
 */
export function publishKey(row: InboundEventEntity, kind: SubscriptionEvent): string {
  return `inbound:${row.id}:${kind}`;
}

/** The platform event as it is (`zoom.<event>`): one per inbound event. */
export function asIsKey(row: InboundEventEntity): string {
  return `inbound:${row.id}:as-is`;
}

/**
 * The recording automation's outcome: operation.complete and operation.failed share one key
 * per inbound event, so a run that publishes one after an earlier run published the other
 * (the event re-queued because marking it processed failed) adds nothing: the first stands.
 */
export function automationOutcomeKey(row: InboundEventEntity): string {
  return `inbound:${row.id}:operation`;
}

/** The inbound queue's job for a stored event, under the event's id. */
export function inboundJob(inboundEventId: string): JobSpec<InboundJobData> {
  return recordJob(JOBS.processInbound, inboundEventId, { inboundEventId });
}

/** The recordings queue's job for a stored recording event, under the event's id. */
export function recordingJob(inboundEventId: string): JobSpec<InboundJobData> {
  return recordJob(JOBS.recordingAutomation, inboundEventId, { inboundEventId });
}
