import { InjectQueue } from '@nestjs/bull';
import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import type { Queue } from 'bull';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../common/api-error';
import { MicroBatcher } from '../common/micro-batch';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { MetricsService } from '../metrics/metrics.service';
import { QUEUES } from '../queue/queue.constants';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import {
  ZOOM_SIGNATURE_HEADER,
  ZOOM_TIMESTAMP_HEADER,
  ZOOM_TRACKING_HEADER,
  verifyZoomSignature,
} from '../zoom/webhook-signature';
import { answerCrcChallenge } from './crc-challenge';
import { dedupeKey } from './dedupe-key';
import { isUtf8 } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { DispatcherService } from '../dispatcher/dispatcher.service';
import { orderKeyOf } from '../dispatcher/order-key';
import { asRecord, routeOf } from './event-mapping';
import {
  InboundEventStore,
  IngestPlan,
  StoredInboundEvent,
  isDataException,
} from './inbound-event.store';
import { InboundJobData, inboundJob, notificationSource } from './inbound-job';
import { PlatformEnvelope, URL_VALIDATION_EVENT, parseEnvelope } from './platform-envelope';

export interface UrlValidationAnswer {
  plainToken: string;
  encryptedToken: string;
}
export interface InboundAck {
  status: 'accepted' | 'duplicate';
}

type Outcome = 'accepted' | 'duplicate' | 'rejected' | 'unavailable';
// Label for requests whose event name cannot be trusted: unverified bodies must not mint labels.
const UNVERIFIED = '(unverified)';

// The platform's id of one delivery attempt; a header value the size of a request line is not one.
const TRACKING_ID_FORMAT = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** x-zm-trackingid when sent once and printable, else null. */
export function trackingIdOf(headers: IncomingHttpHeaders): string | null {
  const value = headers[ZOOM_TRACKING_HEADER];
  return typeof value === 'string' && TRACKING_ID_FORMAT.test(value) ? value : null;
}

/**
 * The envelope as stored: the request's own bytes, unless it carries the download token, a
 * credential for the recording files that is kept only encrypted beside the event (for the
 * links of an event-only deployment) and never passed on.
 */
function storedPayload(
  envelope: Record<string, unknown>,
  rawBody: Buffer,
): Record<string, unknown> | Buffer {
  // Bytes that are not UTF-8 were decoded with replacement characters to be parsed: stored as
  // parsed, then, since PostgreSQL refuses such bytes.
  if (!('download_token' in envelope) && isUtf8(rawBody)) return rawBody;
  const kept = { ...envelope };
  delete kept.download_token;
  return kept;
}

/**
 * What the statement that stores the event does next (IngestPlan): a mapped event is
 * published with it, its notification built here; a recording event, and a registration event
 * (the approval rules look at what was published before), is left to the queue; any other is
 * the record only (the statement still leaves it to the queue when a webhook takes it as it is).
 */
function ingestPlan(
  envelope: PlatformEnvelope,
  eventTs: number | null,
  accountId: string | null,
  trackingId: string | null,
): IngestPlan {
  const route = routeOf(envelope.event);
  if (!route) return { then: 'done' };
  if ('automation' in route || route.approval) return { then: 'queue' };
  const createdAt = new Date();
  const object = asRecord(envelope.payload.object);
  return {
    then: 'publish',
    event: {
      id: randomUUID(),
      kind: route.kind,
      createdAt,
      data: route.data(object),
      orderKey: orderKeyOf(object),
      source: notificationSource({
        event: envelope.event,
        eventTs,
        accountId,
        trackingId,
        receivedAt: createdAt,
      }),
    },
  };
}

/**
 * POST /zoom/events (SPEC §5): verify, answer the URL validation, or store. A mapped event is
 * published in the statement that stores it (its deliveries queued right after), so it needs
 * no inbound job; recording events, and events whose kind reaches more webhooks than the
 * request should wait for, are stored unprocessed and handled from the inbound queue.
 */
@Injectable()
export class InboundService {
  private readonly logger = new Logger(InboundService.name);
  // Jobs of concurrent requests go to Redis in one round trip.
  private readonly jobs = new MicroBatcher((ids: string[]) => this.addJobs(ids));

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: InboundEventStore,
    @InjectQueue(QUEUES.inbound) private readonly queue: Queue<InboundJobData>,
    private readonly metrics: MetricsService,
    private readonly cipher: SecretCipherService,
    private readonly dispatcher: DispatcherService,
  ) {}

  async receive(
    headers: IncomingHttpHeaders,
    rawBody: Buffer,
  ): Promise<UrlValidationAnswer | InboundAck> {
    const secrets = this.config.zoom.webhookSecretTokens;
    if (secrets.length === 0) {
      this.count(UNVERIFIED, 'unavailable');
      throw new ApiError(
        HttpStatus.SERVICE_UNAVAILABLE,
        'Inbound events are refused until ZOOM_WEBHOOK_SECRET_TOKEN is configured',
      );
    }
    const check = verifyZoomSignature(
      {
        timestamp: headers[ZOOM_TIMESTAMP_HEADER],
        signature: headers[ZOOM_SIGNATURE_HEADER],
        rawBody,
      },
      { secrets, toleranceSeconds: this.config.zoom.webhookToleranceSeconds },
    );
    const trackingId = trackingIdOf(headers);
    if (!check.ok) {
      this.count(UNVERIFIED, 'rejected');
      this.logger.warn(`inbound event refused: ${check.message} (tracking id ${trackingId})`);
      throw new ApiError(HttpStatus.UNAUTHORIZED, check.message);
    }
    let envelope: PlatformEnvelope & Record<string, unknown>;
    try {
      envelope = parseEnvelope(rawBody);
    } catch (error) {
      this.count('(malformed)', 'rejected');
      throw error;
    }
    if (envelope.event === URL_VALIDATION_EVENT) {
      this.count(envelope.event, 'accepted');
      const plainToken = envelope.payload.plainToken as string;
      return answerCrcChallenge(check.secret, plainToken);
    }
    return this.storeAndQueue(envelope, rawBody, trackingId);
  }

  private async storeAndQueue(
    envelope: PlatformEnvelope & Record<string, unknown>,
    rawBody: Buffer,
    trackingId: string | null,
  ): Promise<InboundAck> {
    const downloadToken = envelope.download_token;
    const eventTs = Number.isSafeInteger(envelope.event_ts) ? (envelope.event_ts as number) : null;
    const accountId =
      typeof envelope.payload.account_id === 'string' ? envelope.payload.account_id : null;
    let stored: StoredInboundEvent | null;
    try {
      stored = await this.store.insert({
        id: randomUUID(),
        event: envelope.event,
        identityKey: dedupeKey(envelope),
        eventTs,
        accountId,
        payload: storedPayload(envelope, rawBody),
        trackingId,
        downloadTokenEncrypted:
          typeof downloadToken === 'string' && downloadToken !== ''
            ? this.cipher.encrypt(downloadToken, 'recording-download-token')
            : null,
        plan: ingestPlan(envelope, eventTs, accountId, trackingId),
        leaseMs: this.dispatcher.preLeaseMs(),
      });
    } catch (error) {
      throw this.storeFailure(envelope.event, error);
    }
    if (stored === null) {
      this.count(envelope.event, 'duplicate');
      return { status: 'duplicate' };
    }
    this.count(envelope.event, 'accepted');
    // An event left unprocessed may have published its notification already: both go on.
    if (stored.deliveries.length > 0) {
      void this.dispatcher.queueDeliveries(stored.deliveries, stored.leased);
    }
    if (!stored.processed) this.enqueue(stored.id);
    return { status: 'accepted' };
  }

  /**
   * Not awaited: the row is the record, and a job that Redis never took is found by the inbound
   * sweeper, so a slow or absent Redis never delays the platform's 200.
   */
  private enqueue(id: string): void {
    this.jobs
      .submit(id)
      .catch((error: Error) =>
        this.logger.warn(
          `inbound event ${id} is stored but not queued (${error.message}); the sweeper will queue it`,
        ),
      );
  }

  private async addJobs(ids: string[]): Promise<undefined[]> {
    await this.queue.addBulk(ids.map((id) => inboundJob(id)));
    return ids.map(() => undefined);
  }

  private storeFailure(event: string, error: unknown): ApiError {
    // Bad data (e.g. \u0000 in a string, which jsonb refuses): retrying cannot help, so the
    // platform is told so instead of being asked to retry.
    if (isDataException(error)) {
      this.count(event, 'rejected');
      return new ApiError(HttpStatus.BAD_REQUEST, 'Event body holds values that cannot be stored');
    }
    this.count(event, 'unavailable');
    this.logger.error(`could not store inbound ${event}: ${(error as Error).message}`);
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'Events cannot be stored right now; the platform will retry',
    );
  }

  private count(event: string, outcome: Outcome): void {
    this.metrics.inboundEvents.inc({ event, outcome });
  }
}
