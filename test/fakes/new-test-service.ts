import { getQueueToken } from '@nestjs/bull';
import { Logger, Type } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { APP_CONFIG } from '../../src/config/config.module';
import { AppConfig } from '../../src/config/config.types';
import { loadConfig } from '../../src/config/load-config';
import {
  AttemptResult,
  DeliveryRequest,
  DeliverySenderService,
} from '../../src/dispatcher/engine/delivery-sender.service';
import { DeliveryAttemptService } from '../../src/dispatcher/engine/delivery-attempt.service';
import { DeliveryStore } from '../../src/delivery-record/delivery.store';
import { DispatcherService } from '../../src/dispatcher/publish/dispatcher.service';
import { LocalDeliveries } from '../../src/dispatcher/publish/local-deliveries';
import { ReceiverHealthService } from '../../src/dispatcher/engine/receiver-health.service';
import { ReceiverHealthStore } from '../../src/delivery-record/receiver-health.store';
import { EventStore } from '../../src/delivery-record/event.store';
import { InboundEventStore } from '../../src/inbound/inbound-event.store';
import { MetricsService } from '../../src/metrics/metrics.service';
import { QUEUES } from '../../src/queue/queue.constants';
import { RecordingDownloadStore } from '../../src/recordings/recording-download.store';
import { ZoomClient } from '../../src/zoom/zoom.client';
import { ZoomMeetingRecording } from '../../src/zoom/zoom.types';
import { SecretCipherService } from '../../src/webhooks/secret-cipher.service';
import { WebhookStore } from '../../src/webhooks/webhook.store';
import { WebhooksService } from '../../src/webhooks/webhooks.service';
import { DeliveryControlStore } from '../../src/delivery-record/delivery-control.store';
import { WebhookSlots } from '../../src/dispatcher/engine/webhook-slots';
import { MemoryWebhookSlots } from './memory-slots';
import { MemoryDeliveryOrderStore } from './memory-order';
import { DeliveryOrderStore } from '../../src/delivery-record/delivery-order.store';
import {
  MemoryDeliveryControlStore,
  MemoryDeliveryStore,
  MemoryEventStore,
  MemoryInboundEventStore,
  MemoryReceiverHealthStore,
  MemoryRecordingDownloadStore,
  MemoryTables,
  MemoryWebhookStore,
} from './memory-stores';

/** Answers attempts from a script (one answer per attempt, in order) and keeps the requests. */
export class ScriptedSender implements Pick<DeliverySenderService, 'send'> {
  readonly requests: DeliveryRequest[] = [];
  private readonly answers: {
    statusCode: number | null;
    error: string | null;
    retryAfter: string | null;
  }[] = [];

  /** The next attempts get these HTTP statuses (null: no answer, e.g. refused). */
  answer(...statuses: (number | null)[]): void {
    for (const statusCode of statuses) this.answerWith(statusCode);
  }

  /**
   * The next attempt gets this status, with a Retry-After header when one is given; its result
   * is the real sender's for that answer (test/scripted-sender-contract.e2e-spec.ts holds them
   * to the same cases).
   */
  answerWith(statusCode: number | null, retryAfter: string | null = null): void {
    const ok = statusCode !== null && statusCode >= 200 && statusCode < 300;
    const redirect = statusCode !== null && statusCode >= 300 && statusCode < 400;
    const error = ok
      ? null
      : statusCode === null
        ? 'ECONNREFUSED'
        : redirect
          ? `HTTP ${statusCode}: redirects are not followed`
          : `HTTP ${statusCode}`;
    this.answers.push({ statusCode, error, retryAfter });
  }

  send(req: DeliveryRequest): Promise<AttemptResult> {
    this.requests.push(req);
    const answer = this.answers.shift();
    if (!answer) throw new Error(`no scripted answer for attempt ${req.attempt}`);
    return Promise.resolve({
      ok: answer.error === null,
      startedAt: new Date(),
      durationMs: 1,
      statusCode: answer.statusCode,
      error: answer.error,
      responseBody: answer.statusCode === null ? null : '',
      retryAfter: answer.retryAfter,
    });
  }
}

/** A Bull queue as far as the services use one: the jobs added, nothing run. */
export class RecordingQueue {
  readonly added: { name: string; data: unknown; opts?: { jobId?: string } }[] = [];

  /** Holds no job: every add goes through (see ensureJobs). */
  getJob(): Promise<null> {
    return Promise.resolve(null);
  }

  addBulk(jobs: { name: string; data: unknown; opts?: { jobId?: string } }[]): Promise<unknown[]> {
    this.added.push(...jobs);
    return Promise.resolve(jobs);
  }

  /** Job ids added, in order. */
  jobIds(): (string | undefined)[] {
    return this.added.map((job) => job.opts?.jobId);
  }

  /** The deliveries the delivery jobs added carry, in order. */
  deliveryIds(): string[] {
    return this.added.flatMap((job) => (job.data as { deliveryIds: string[] }).deliveryIds);
  }
}

/** The platform API as the recording automation uses it. */
export class FakeZoomClient implements Pick<ZoomClient, 'configured' | 'getMeetingRecordings'> {
  configured = false;
  readonly calls: string[] = [];
  recordings: (meetingId: string) => Promise<ZoomMeetingRecording> = () =>
    Promise.reject(new Error('no recordings scripted'));

  getMeetingRecordings(meetingId: string): Promise<ZoomMeetingRecording> {
    this.calls.push(meetingId);
    return this.recordings(meetingId);
  }
}

export interface TestContext<T> {
  sut: T;
  tables: MemoryTables;
  /** The DeliveryStore the service was given. */
  deliveryStore: MemoryDeliveryStore;
  /** The webhook slots behind the service's WebhookSlots. */
  slots: MemoryWebhookSlots;
  sender: ScriptedSender;
  deliveriesQueue: RecordingQueue;
  zoom: FakeZoomClient;
  config: AppConfig;
  metrics: MetricsService;
  /** The real DispatcherService over the same in-memory stores. */
  dispatcher: DispatcherService;
  /** Where publishes go to a worker of the same process: nothing is attached unless a spec does. */
  local: LocalDeliveries;
  cipher: SecretCipherService;
}

/**
 * Builds `service` through Nest's injector, as the app does, with every store, the sender,
 * the queues and the platform client replaced by in-memory fakes: no PostgreSQL, no Redis, no
 * network. `env` is read by the real config loader, so defaults are the app's own.
 */
export async function newTestService<T>(
  service: Type<T>,
  env: Record<string, string> = {},
): Promise<TestContext<T>> {
  const tables = new MemoryTables();
  const sender = new ScriptedSender();
  const deliveriesQueue = new RecordingQueue();
  const zoom = new FakeZoomClient();
  const deliveryStore = new MemoryDeliveryStore(tables);
  const config = loadConfig(env);
  const slots = new MemoryWebhookSlots();
  const providers = [
    { provide: WebhookSlots, useValue: slots.forProcess() },
    { provide: APP_CONFIG, useValue: config },
    { provide: DeliveryStore, useValue: deliveryStore },
    { provide: EventStore, useValue: new MemoryEventStore(tables) },
    { provide: InboundEventStore, useValue: new MemoryInboundEventStore(tables) },
    { provide: WebhookStore, useValue: new MemoryWebhookStore(tables) },
    { provide: ReceiverHealthStore, useValue: new MemoryReceiverHealthStore(tables) },
    { provide: DeliveryControlStore, useValue: new MemoryDeliveryControlStore(tables) },
    { provide: DeliveryOrderStore, useValue: new MemoryDeliveryOrderStore(tables) },
    WebhooksService,
    ReceiverHealthService,
    DeliveryAttemptService,
    { provide: RecordingDownloadStore, useValue: new MemoryRecordingDownloadStore(tables) },
    { provide: DeliverySenderService, useValue: sender },
    { provide: ZoomClient, useValue: zoom },
    { provide: getQueueToken(QUEUES.deliveries), useValue: deliveriesQueue },
    { provide: getQueueToken(QUEUES.inbound), useValue: new RecordingQueue() },
    { provide: getQueueToken(QUEUES.recordings), useValue: new RecordingQueue() },
    MetricsService,
    SecretCipherService,
    DispatcherService,
    LocalDeliveries,
  ];
  // The services log every decision; the specs assert the decisions themselves.
  Logger.overrideLogger(false);
  const module = await Test.createTestingModule({
    providers: (providers as unknown[]).includes(service) ? providers : [...providers, service],
  }).compile();
  return {
    sut: module.get(service),
    tables,
    deliveryStore,
    slots,
    sender,
    deliveriesQueue,
    zoom,
    config,
    metrics: module.get(MetricsService),
    dispatcher: module.get(DispatcherService),
    local: module.get(LocalDeliveries),
    cipher: module.get(SecretCipherService),
  };
}
