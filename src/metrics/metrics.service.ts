import { InjectQueue } from '@nestjs/bull';
import { Injectable } from '@nestjs/common';
import type { Queue } from 'bull';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { QUEUES } from '../queue/queue.constants';
import { DESTINATIONS } from '../destinations/registry';
import { INBOUND_VIAS } from '../common/inbound-via';

/**
 * The service's Prometheus metrics. Each app instance has its own registry, so several apps
 * in one process (tests) never collide over metric names.
 */
@Injectable()
export class MetricsService {
  readonly registry = new Registry();

  readonly httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });

  readonly inboundEvents = new Counter({
    name: 'inbound_events_total',
    help: `Platform events received, by event type, outcome and way in (via: ${INBOUND_VIAS.join(', ')})`,
    labelNames: ['event', 'outcome', 'via'] as const,
    registers: [this.registry],
  });

  readonly inboundEventsAbandoned = new Counter({
    name: 'inbound_events_abandoned_total',
    help:
      'Stored platform events the inbound job gave up on after the most runs it makes ' +
      '(kept, marked processed with the reason: docs/operations.md), by event type',
    labelNames: ['event'] as const,
    registers: [this.registry],
  });

  readonly deliveries = new Counter({
    name: 'deliveries_total',
    help:
      'Deliveries that reached a final state, by outcome (succeeded, failed) and destination ' +
      `type (${DESTINATIONS.types.join(', ')})`,
    labelNames: ['outcome', 'destination'] as const,
    registers: [this.registry],
  });

  readonly deliveryAttempts = new Histogram({
    name: 'delivery_attempt_duration_seconds',
    help:
      'Duration of delivery attempts, by outcome (success, failure) and destination type ' +
      `(${DESTINATIONS.types.join(', ')})`,
    labelNames: ['outcome', 'destination'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly deliverySweeps = new Counter({
    name: 'delivery_sweeps_total',
    help:
      'Sweeps for due deliveries the queue lost, by outcome (completed; skipped: another ' +
      'worker was sweeping; failed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  readonly deliveriesRequeued = new Counter({
    name: 'deliveries_requeued_total',
    help: 'Due deliveries the sweeper queued again because no worker held them',
    registers: [this.registry],
  });

  readonly webhooksDisabled = new Counter({
    name: 'webhooks_disabled_total',
    help: 'Webhooks the service disabled, by reason (gone: the receiver answered 410; failing)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly deliveriesRedelivered = new Counter({
    name: 'deliveries_redelivered_total',
    help:
      'Deliveries queued again by the API, by how (redeliver, replay; missed: created by a ' +
      'replay for an event the webhook never received)',
    labelNames: ['how'] as const,
    registers: [this.registry],
  });

  readonly retentionDeleted = new Counter({
    name: 'retention_deleted_rows_total',
    help: 'Rows the retention job deleted, by table',
    labelNames: ['table'] as const,
    registers: [this.registry],
  });

  readonly platformWsConnected = new Gauge({
    name: 'platform_ws_connected',
    help: "1 while this process holds the platform's event socket, acknowledged; else 0",
    registers: [this.registry],
  });

  readonly platformWsFramesRefused = new Counter({
    name: 'platform_ws_frames_refused_total',
    help:
      "Frames of the platform's event socket refused unread, by reason (too_large: over 1 MiB, " +
      'the socket closed with 1009)',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  readonly platformWsFrameErrors = new Counter({
    name: 'platform_ws_frame_errors_total',
    help: "Frames of the platform's event socket that reading or ingesting threw on (kept as unmappable)",
    registers: [this.registry],
  });

  readonly platformWsReconnects = new Counter({
    name: 'platform_ws_reconnects_total',
    help: "Sockets this process opened to replace the platform's event socket, by cause",
    labelNames: ['cause'] as const,
    registers: [this.registry],
  });

  constructor(
    @InjectQueue(QUEUES.deliveries) deliveries: Queue,
    @InjectQueue(QUEUES.inbound) inbound: Queue,
    @InjectQueue(QUEUES.recordings) recordings: Queue,
  ) {
    collectDefaultMetrics({ register: this.registry });
    const queues = [deliveries, inbound, recordings];
    new Gauge({
      name: 'queue_jobs',
      help: 'Jobs per queue and state (waiting, active, delayed, failed)',
      labelNames: ['queue', 'state'] as const,
      registers: [this.registry],
      async collect() {
        await Promise.all(
          queues.map(async (queue) => {
            // A down Redis must not fail the scrape; the gauge just goes stale.
            if (queue.client.status !== 'ready') return;
            const counts = await queue.getJobCounts();
            for (const state of ['waiting', 'active', 'delayed', 'failed'] as const) {
              this.set({ queue: queue.name, state }, counts[state]);
            }
          }),
        );
      },
    });
  }
}
