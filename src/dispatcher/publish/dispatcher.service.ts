import { newRowId } from '../../database/row-id';
import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import type { Queue } from 'bull';
import { MicroBatcher } from '../../common/micro-batch';
import { withTimeout } from '../../common/with-timeout';
import { QUEUES } from '../../queue/queue.constants';
import { PublishedKind, TEST_EVENT, isPublishedKind } from '../../webhooks/subscription-events';
import { EventSource } from '../../delivery-record/delivery-body';
import { DELIVERIES_PER_JOB, deliverJobs } from './delivery-job';
import { DeliveryEntity } from '../../delivery-record/delivery.entity';
import type { DeliveryRef, LeasedDelivery } from '../../delivery-record/delivery.store';
import { EventStore, NewEvent } from '../../delivery-record/event.store';
import { LocalDeliveries } from './local-deliveries';
import { SPAN_ATTRIBUTES, Tracing, traceparentOf } from '../../telemetry/tracing';

export interface PublishInput {
  kind: PublishedKind;
  /** An object, except a platform event as it came whose payload was not one (docs/receiving.md). */
  data: unknown;
  source?: EventSource | null;
  /** Same key => the same event, no second fan-out (events.idempotency_key is UNIQUE). */
  idempotencyKey?: string;
  /** The platform object's uuid, which ordered webhooks keep the order of (docs/receiving.md#ordered-delivery-per-meeting). */
  orderKey?: string | null;
  /** W3C traceparent the deliveries' attempts continue (docs/operations.md): the publishing span. */
  traceContext?: string | null;
}

export interface PublishResult {
  eventId: string;
  deliveryIds: string[];
}

/** Longest a publish waits for Redis; past it the sweeper queues the deliveries instead. */
const ENQUEUE_TIMEOUT_MS = 2000;
/** Longest a committed delivery waits for others to share its add to the queue. */
const ENQUEUE_LINGER_MS = 10;

/**
 * The one entry point for notifications: stores the event and its deliveries in PostgreSQL
 * (the record), then hands them to the deliveries worker of this process if it has one
 * (LocalDeliveries), else queues them. Queueing is best effort; the sweeper re-queues whatever
 * neither got.
 */
@Injectable()
export class DispatcherService {
  private readonly logger = new Logger(DispatcherService.name);
  // Deliveries committed within ENQUEUE_LINGER_MS (concurrent publishes and ingests) share
  // jobs and a round trip to Redis, and while one add is in flight the next gathers: an add
  // costs the adding process about the same however many deliveries it carries. The platform's
  // request never waits for it (the rows are the record); publish() callers wait up to the
  // linger more. Lingering rather than going out on the next turn lowers the API's CPU per
  // ingested event under a burst (docs/benchmarks.md, "Choices the figures made").
  private readonly toQueue = new MicroBatcher<DeliveryRef, undefined>(
    async (deliveries) => {
      await this.enqueue(deliveries);
      return deliveries.map(() => undefined);
    },
    { maxSize: DELIVERIES_PER_JOB * 20, maxInFlight: 1, lingerMs: ENQUEUE_LINGER_MS },
  );

  constructor(
    private readonly events: EventStore,
    @InjectQueue(QUEUES.deliveries) private readonly queue: Pick<Queue, 'addBulk'>,
    private readonly local: LocalDeliveries,
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {}

  async publish(input: PublishInput): Promise<PublishResult> {
    // Typed callers cannot pass another kind; this guards the untyped ones (job data, tests).
    if (!isPublishedKind(input.kind)) {
      throw new Error(
        `publish: "${String(input.kind)}" is not a subscription or platform event kind`,
      );
    }
    const event: NewEvent = {
      id: newRowId(),
      kind: input.kind,
      createdAt: new Date(),
      data: input.data,
      source: input.source ?? null,
      idempotencyKey: input.idempotencyKey ?? null,
      orderKey: input.orderKey ?? null,
    };
    // Publishing for a traced event (the inbound job) is a span of its trace, and its
    // deliveries' attempts continue it.
    const span = input.traceContext
      ? this.tracing.fromStored(input.traceContext, 'bridge.publish', SpanKind.INTERNAL, {
          [SPAN_ATTRIBUTES.event]: input.kind,
          [SPAN_ATTRIBUTES.eventId]: event.id,
        })
      : null;
    event.traceContext = traceparentOf(span) ?? input.traceContext ?? null;
    const deliveries = await this.events
      .fanOut(event)
      .then((created) => {
        span?.setAttribute(SPAN_ATTRIBUTES.deliveries, created?.length ?? 0);
        return created;
      })
      .finally(() => span?.end());
    if (deliveries === null) {
      const existing = await this.events.findByIdempotencyKey(input.idempotencyKey!);
      if (!existing) throw new Error('publish: idempotency key conflict, but no event holds it');
      // Already published: queue again what it created (a no-op for jobs still queued), in
      // case the first publisher died between its commit and its queueing.
      await this.queued(existing.deliveries);
      return { eventId: existing.eventId, deliveryIds: existing.deliveries.map((d) => d.id) };
    }
    await this.queued(deliveries);
    return { eventId: event.id, deliveryIds: deliveries.map((d) => d.id) };
  }

  /**
   * Queues deliveries committed elsewhere (the inbound endpoint's own statement, redeliver and
   * replay). Never rejects: the sweeper queues whatever the queue does not take, so a caller
   * whose answer must not hang on Redis need not await it.
   */
  queueDeliveries(deliveries: DeliveryRef[], leased: LeasedDelivery[] = []): Promise<void> {
    return this.queued(deliveries, leased);
  }

  /**
   * How long the deliveries of an event stored now may be leased, in the statement that stores
   * them, to the worker of this process (which then sends them without claiming them); null when
   * this process has no worker or its lanes are backed up.
   */
  preLeaseMs(): number | null {
    return this.local.preLeaseMs();
  }

  /**
   * Publishes a `webhook.test` event to one webhook. Returns the delivery as it was queued, or
   * null when the webhook is not (or no longer) active.
   */
  async publishTest(webhook: { id: string }): Promise<DeliveryEntity | null> {
    // A test starts a trace of its own (docs/operations.md): no platform event caused it.
    const span = this.tracing.root('bridge.webhook.test', {
      [SPAN_ATTRIBUTES.webhookId]: webhook.id,
    });
    const delivery = await this.events.insertTest(webhook.id, {
      id: newRowId(),
      kind: TEST_EVENT,
      createdAt: new Date(),
      data: {
        webhook_id: webhook.id,
        message: 'Test notification sent from POST /api/webhooks/{id}/test',
      },
      source: null,
      idempotencyKey: null,
      traceContext: traceparentOf(span),
    });
    span?.end();
    if (delivery === null) return null;
    await this.queued([{ id: delivery.id, webhookId: delivery.webhookId }]);
    return delivery;
  }

  /** The kind and data of the event published under `idempotencyKey`, if one was. */
  async published(
    idempotencyKey: string,
  ): Promise<{ kind: PublishedKind; data: Record<string, unknown> } | null> {
    const event = await this.events.findByIdempotencyKey(idempotencyKey);
    // Callers read the mapped and operation events they keyed, whose data are objects.
    return event && { kind: event.kind, data: event.data as Record<string, unknown> };
  }

  /**
   * Resolves once the deliveries are with this process's worker (APP_ROLE=all, as far as its
   * lanes have room) or in jobs (or Redis failed them: enqueue never rejects).
   */
  private async queued(deliveries: DeliveryRef[], leased: LeasedDelivery[] = []): Promise<void> {
    if (deliveries.length === 0) return;
    await Promise.all(this.local.take(deliveries, leased).map((d) => this.toQueue.submit(d)));
  }

  private async enqueue(deliveries: DeliveryRef[]): Promise<void> {
    if (deliveries.length === 0) return;
    try {
      await withTimeout(
        this.queue.addBulk(deliverJobs(deliveries)),
        ENQUEUE_TIMEOUT_MS,
        `no answer from Redis within ${ENQUEUE_TIMEOUT_MS} ms`,
      );
    } catch (error) {
      // The deliveries are committed; the sweeper queues them once they are due and missing.
      this.logger.warn(
        `could not queue ${deliveries.length} deliveries (${(error as Error).message}); ` +
          'the sweeper will queue them',
      );
    }
  }
}
