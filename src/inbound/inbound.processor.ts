import { InjectQueue } from '@nestjs/bull';
import { Injectable, Logger, Optional } from '@nestjs/common';
import { SpanKind } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import type { Job, Queue } from 'bull';
import { DispatcherService } from '../dispatcher/publish/dispatcher.service';
import { MetricsService } from '../metrics/metrics.service';
import { orderKeyOf } from '../dispatcher/publish/order-key';
import { ensureJobs } from '../queue/ensure-job';
import { OnJob } from '../queue/on-job.decorator';
import { JOBS, QUEUES } from '../queue/queue.constants';
import { SPAN_ATTRIBUTES, Tracing, inSpan, traceparentOf } from '../telemetry/tracing';
import { platformEventKind } from '../webhooks/subscription-events';
import { dedupeKey } from './dedupe-key';
import {
  ApprovalStep,
  EventData,
  MappingRule,
  approvalStep,
  gainingEventsOf,
  mappingRuleOf,
  unmappableEventReason,
} from './event-mapping';
import { isDeterministicFailure } from './platform-reader';
import { InboundEventEntity } from './inbound-event.entity';
import { InboundEventStore, InboundEventSummary } from './inbound-event.store';
import {
  InboundJobData,
  asIsKey,
  platformObjectOf,
  platformPayloadAsSent,
  platformPayloadOf,
  publishKey,
  recordingJob,
  sourceOf,
} from './inbound-job';

type PublishRule = Exclude<MappingRule, { automation: string }>;

/** A stored event being worked, and the span of its job (null: not traced). */
interface Worked {
  row: InboundEventEntity;
  span: Span | null;
  /** The traceparent its publishes continue: the job's span, else the request's. */
  traceContext: string | null;
}

/**
 * Most runs of the inbound job on one event. A job makes 5 attempts and the sweeper queues an
 * unprocessed event again, so a failure that every run meets (or a run that kills its process)
 * once meant for ever; after this many begun runs the event is given up: kept, marked
 * processed with the reason, logged and counted (docs/operations.md). Legitimate waits (a
 * cancellation waiting for its registration) end within a few runs.
 */
export const INBOUND_MAX_RUNS = 20;

/** An inbound event as log lines name it: event, id and the platform's tracking id. */
const describe = (row: InboundEventSummary): string =>
  `inbound ${row.event} ${row.id} (tracking id ${row.trackingId})`;

/**
 * Works the inbound queue (worker role): publishes every stored platform event as it is
 * (`zoom.<event>`, for the webhooks subscribed to it or to `zoom.*`), maps it through
 * EVENT_MAPPING and publishes that, hands recording events to the recording automation, and
 * marks the event processed. Idempotent: a job run twice (sweeper, stalled job) publishes
 * with the same keys, so subscribers are notified once.
 */
@Injectable()
export class InboundProcessor {
  private readonly logger = new Logger(InboundProcessor.name);

  constructor(
    @InjectQueue(QUEUES.recordings) private readonly recordings: Queue<InboundJobData>,
    private readonly store: InboundEventStore,
    private readonly dispatcher: DispatcherService,
    private readonly metrics: MetricsService,
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {}

  // Each job is two or three short queries and a publish, so many run at once.
  @OnJob({
    queue: QUEUES.inbound,
    job: JOBS.processInbound,
    concurrency: 20,
    whenFinal: 'the sweeper queues it again while it is unprocessed',
    onFinalFailure: (processor: InboundProcessor, job: Job<InboundJobData>, error) =>
      processor.store.recordError(job.data.inboundEventId, error.message),
  })
  async process(job: Job<InboundJobData>): Promise<void> {
    const id = job.data.inboundEventId;
    const runs = await this.store.beginRun(id);
    if (runs === null) return;
    if (runs > INBOUND_MAX_RUNS) {
      await this.giveUp(id);
      return;
    }
    const row = await this.store.findById(id);
    if (!row || row.processedAt) return;
    // The job is a span of the event's trace (docs/operations.md), when its request was traced.
    const span = row.traceContext
      ? this.tracing.fromStored(row.traceContext, 'bridge.inbound.job', SpanKind.INTERNAL, {
          [SPAN_ATTRIBUTES.zoomEvent]: row.event,
          [SPAN_ATTRIBUTES.inboundId]: row.id,
        })
      : null;
    const worked = { row, span, traceContext: traceparentOf(span) ?? row.traceContext };
    try {
      await this.work(worked);
    } catch (error) {
      this.tracing.failed(span, error);
      throw error;
    } finally {
      span?.end();
    }
  }

  /**
   * Ends an event that INBOUND_MAX_RUNS runs did not finish: kept as it is, marked processed
   * with the reason (its last error beside), logged with its inbound id, counted. Read without
   * its payload: reading it may be what failed.
   */
  private async giveUp(id: string): Promise<void> {
    const row = await this.store.findSummary(id);
    if (!row || row.processedAt) return;
    const reason =
      `given up after ${INBOUND_MAX_RUNS} runs of the inbound job` +
      (row.processError ? ` (last error: ${row.processError})` : '');
    this.metrics.inboundEventsAbandoned.inc({ event: row.event });
    this.logger.error(`${describe(row)} ${reason}: kept, and no longer retried`);
    await this.store.markProcessed(row, reason);
  }

  private async work(worked: Worked): Promise<void> {
    const { row, span } = worked;
    const rule = mappingRuleOf(row.event);
    // An event that cannot be mapped is delivered as it came and kept, never retried (docs/api.md#platform-events-post-zoomevents).
    const unmappable = unmappableEventReason(row.event, platformPayloadAsSent(row));
    if (unmappable) {
      this.logger.warn(
        inSpan(
          span,
          `${describe(row)} cannot be mapped (${unmappable}): kept, and delivered only as it came`,
        ),
      );
    }
    if (rule && 'automation' in rule && !unmappable) {
      await this.publishAsIs(worked);
      // The automation marks the event processed once it has published its outcome.
      await this.handOver(worked);
      return;
    }
    // Unmapped events are delivered only as they are, and kept as the record (docs/api.md#platform-events-post-zoomevents).
    const [, failure] = await Promise.all([
      this.publishAsIs(worked),
      rule && !unmappable && !('automation' in rule) ? this.map(worked, rule) : null,
    ]);
    const error = unmappable ? `cannot be mapped: ${unmappable}` : failure;
    await this.store.markProcessed(row, error ?? null);
  }

  /** `zoom.<event>` with the platform's payload (the download_token was never stored in it). */
  private async publishAsIs({ row, traceContext }: Worked): Promise<void> {
    const kind = platformEventKind(row.event);
    if (kind === null) return;
    await this.dispatcher.publish({
      kind,
      data: platformPayloadAsSent(row),
      source: sourceOf(row),
      idempotencyKey: asIsKey(row),
      orderKey: orderKeyOf(platformObjectOf(row)),
      traceContext,
    });
  }

  /**
   * The mapped notification. Registration events follow the approval rules: keyed per
   * registrant and meeting rather than per event, and a loss only after a gain.
   */
  private async map(worked: Worked, rule: PublishRule): Promise<string | null> {
    const { row, span, traceContext } = worked;
    const object = platformObjectOf(row);
    const what = describe(row);
    let step: ApprovalStep | null;
    let data: EventData;
    try {
      step = rule.approval
        ? approvalStep(rule.approval, object, row.accountId)
        : { key: publishKey(row, rule.kind) };
      data = rule.data(object);
    } catch (error) {
      // What the event holds fails every run alike: recorded, not retried.
      if (!isDeterministicFailure(error)) throw error;
      const reason = `cannot be mapped: ${(error as Error).message}`;
      this.logger.error(inSpan(span, `${what} ${reason}: kept, and delivered only as it came`));
      return reason;
    }
    if (step === null || (step.onlyAfter && !(await this.dispatcher.published(step.onlyAfter)))) {
      // A registration and its cancellation may be worked at once: the loss waits for the gain.
      if (step !== null && (await this.gainPending(row))) {
        throw new Error(`${what}: the registration it withdraws is not processed yet; retrying`);
      }
      this.logger.log(inSpan(span, `${what}: no ${rule.kind} under the approval rules`));
      return null;
    }
    span?.setAttribute(SPAN_ATTRIBUTES.event, rule.kind);
    await this.dispatcher.publish({
      kind: rule.kind,
      data,
      source: sourceOf(row),
      idempotencyKey: step.key,
      orderKey: orderKeyOf(object),
      traceContext,
    });
    this.logger.log(inSpan(span, `${what}: published ${rule.kind}`));
    return null;
  }

  /** Whether an event that may gain this registrant is stored and not yet processed. */
  private gainPending(row: InboundEventEntity): Promise<boolean> {
    const payload = platformPayloadOf(row);
    const keys = gainingEventsOf(row.event).map((event) => dedupeKey({ event, payload }));
    return this.store.anyUnprocessed(keys);
  }

  private async handOver({ row, span }: Worked): Promise<void> {
    const { notRemoved } = await ensureJobs(this.recordings, [recordingJob(row.id)]);
    for (const { reason } of notRemoved) {
      // The event stays unprocessed, so the inbound sweeper brings it back here later.
      this.logger.warn(
        inSpan(
          span,
          `inbound event ${row.id}: the finished recording automation job cannot be replaced ` +
            `yet (${reason}); the sweeper queues the event again`,
        ),
      );
    }
  }
}
