import { newRowId } from '../database/row-id';
import { InjectQueue } from '@nestjs/bull';
import { HttpStatus, Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import type { Queue } from 'bull';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../common/api-error';
import { MicroBatcher } from '../common/micro-batch';
import { holdsImpreciseNumber, storableCopy, stringifyPrecise } from '../common/precise-json';
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
import { DispatcherService } from '../dispatcher/publish/dispatcher.service';
import { orderKeyOf } from '../dispatcher/publish/order-key';
import { asRecord, mappingRuleOf, unmappableEventReason } from './event-mapping';
import { asString } from './platform-reader';
import {
  InboundEventStore,
  IngestPlan,
  NewInboundEvent,
  StoredInboundEvent,
  isDataException,
} from './inbound-event.store';
import { InboundJobData, inboundJob, notificationSource } from './inbound-job';
import type { InboundVia } from './inbound-via';
import { PlatformEnvelope, URL_VALIDATION_EVENT, parseEnvelope } from './platform-envelope';
import { SPAN_ATTRIBUTES, Tracing, traceparentOf } from '../telemetry/tracing';

export interface UrlValidationAnswer {
  plainToken: string;
  encryptedToken: string;
}
export interface InboundAck {
  status: 'accepted' | 'duplicate';
}

/** How an event came: its way in, and the platform's tracking id of the request, if any. */
export interface InboundOrigin {
  via: InboundVia;
  trackingId: string | null;
  /**
   * The identity key, where the caller knows more than the event says: reconciliation, for a
   * report row that names no participant (docs/reconciliation.md#identity). Else dedupeKey's.
   */
  identityKey?: string;
}

type Outcome = 'accepted' | 'duplicate' | 'unmappable' | 'rejected' | 'unavailable';
// Label for requests whose event name cannot be trusted: unverified bodies must not mint labels.
const UNVERIFIED = '(unverified)';

// The platform's id of one delivery attempt; a header value the size of a request line is not one.
const TRACKING_ID_FORMAT = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

/** x-zm-trackingid when sent once and printable, else null. */
export function trackingIdOf(headers: IncomingHttpHeaders): string | null {
  const value = headers[ZOOM_TRACKING_HEADER];
  return typeof value === 'string' && TRACKING_ID_FORMAT.test(value) ? value : null;
}

// U+0000 or a surrogate spelt as an escape (an escaped paired one too, harmlessly): jsonb
// refuses both. Raw, they cannot come: U+0000 is not valid in JSON text, a lone surrogate not
// in UTF-8.
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
const holdsUnstorableEscape = (body: Buffer): boolean =>
  body.includes('\\u') && UNSTORABLE_ESCAPE.test(body.toString('latin1'));

/** What an event is stored as: the jsonb `payload`, and the request's bytes when it differs. */
interface StoredForm {
  payload: Record<string, unknown> | Buffer;
  rawBody: Buffer | null;
}

/**
 * The envelope as stored. Nearly always the request's own bytes, as they came. A body that
 * carries the download token (a credential for the recording files, kept only encrypted beside
 * the event and never passed on) is stored without it; one that holds what jsonb cannot hold
 * (U+0000, unpaired surrogates, numbers past numeric's range, bytes that are not UTF-8) is
 * stored as a copy with those replaced (U+FFFD; such a number as a string), and its bytes are
 * kept beside it in `raw_body`: the request's own, or without the token its exact JSON
 * (numbers by their own text, text escaped as it came). The workers read the event from
 * those bytes, so what is delivered is what came.
 */
function storedForm(envelope: Record<string, unknown>, rawBody: Buffer): StoredForm {
  const utf8 = isUtf8(rawBody);
  const hasToken = 'download_token' in envelope;
  if (utf8 && !hasToken && !holdsUnstorableEscape(rawBody) && !holdsImpreciseNumber(envelope)) {
    return { payload: rawBody, rawBody: null };
  }
  const kept = { ...envelope };
  delete kept.download_token;
  const { value, changed } = storableCopy(kept);
  const faithful = utf8 && !changed;
  return {
    payload: value as Record<string, unknown>,
    rawBody: faithful ? null : hasToken ? Buffer.from(stringifyPrecise(kept), 'utf8') : rawBody,
  };
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
  origin: InboundOrigin,
): IngestPlan {
  const rule = mappingRuleOf(envelope.event);
  // Nothing to map (or nothing that can be): the record, and the as-it-came delivery.
  if (!rule || unmappableEventReason(envelope.event, envelope.payload) !== null) {
    return { then: 'done' };
  }
  if ('automation' in rule || rule.approval) return { then: 'queue' };
  const createdAt = new Date();
  const object = asRecord(asRecord(envelope.payload).object);
  return {
    then: 'publish',
    event: {
      id: newRowId(),
      kind: rule.kind,
      createdAt,
      data: rule.data(object),
      orderKey: orderKeyOf(object),
      source: notificationSource({
        event: envelope.event,
        eventTs,
        accountId,
        trackingId: origin.trackingId,
        receivedAt: createdAt,
        via: origin.via,
      }),
    },
  };
}

/**
 * POST /zoom/events (docs/api.md#platform-events-post-zoomevents): verify, answer the URL validation, or store. A mapped event is
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
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {}

  /** `span`: the request's span (docs/operations.md), which gets the event's attributes; null: none. */
  async receive(
    headers: IncomingHttpHeaders,
    rawBody: Buffer,
    span: Span | null = null,
  ): Promise<UrlValidationAnswer | InboundAck> {
    const secrets = this.config.zoom.webhookSecretTokens;
    if (secrets.length === 0) {
      this.count(UNVERIFIED, 'unavailable', span, 'webhook');
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
    if (trackingId !== null) span?.setAttribute(SPAN_ATTRIBUTES.zoomTrackingId, trackingId);
    if (!check.ok) {
      this.count(UNVERIFIED, 'rejected', span, 'webhook');
      this.logger.warn(`inbound event refused: ${check.message} (tracking id ${trackingId})`);
      throw new ApiError(HttpStatus.UNAUTHORIZED, check.message);
    }
    const envelope = this.parse(rawBody, span, 'webhook');
    if (envelope.event === URL_VALIDATION_EVENT) {
      this.count(envelope.event, 'accepted', span, 'webhook');
      // parseEnvelope checked it is a string.
      const plainToken = asRecord(envelope.payload).plainToken as string;
      return answerCrcChallenge(check.secret, plainToken);
    }
    return this.storeAndQueue(envelope, rawBody, { via: 'webhook', trackingId }, span);
  }

  /**
   * One platform event that came another way than the webhook (its event socket, or rebuilt by
   * reconciliation: docs/inbound-sources.md), as its JSON bytes: stored, de-duplicated, mapped
   * and delivered exactly as a verified webhook event is. There is no signature to check: the
   * source vouches for it.
   */
  async ingest(
    rawBody: Buffer,
    origin: InboundOrigin,
    span: Span | null = null,
  ): Promise<InboundAck> {
    const envelope = this.parse(rawBody, span, origin.via);
    return this.storeAndQueue(envelope, rawBody, origin, span);
  }

  /** The envelope, or the 400 of malformed JSON (counted). */
  private parse(
    rawBody: Buffer,
    span: Span | null,
    via: InboundVia,
  ): PlatformEnvelope & Record<string, unknown> {
    let envelope: PlatformEnvelope & Record<string, unknown>;
    try {
      envelope = parseEnvelope(rawBody);
    } catch (error) {
      this.count('(malformed)', 'rejected', span, via);
      throw error;
    }
    span?.setAttribute(SPAN_ATTRIBUTES.zoomEvent, envelope.event);
    return envelope;
  }

  private async storeAndQueue(
    envelope: PlatformEnvelope & Record<string, unknown>,
    rawBody: Buffer,
    origin: InboundOrigin,
    span: Span | null,
  ): Promise<InboundAck> {
    const { trackingId, via } = origin;
    const downloadToken = envelope.download_token;
    const eventTs = Number.isSafeInteger(envelope.event_ts) ? (envelope.event_ts as number) : null;
    const accountId = asString(asRecord(envelope.payload).account_id);
    const unmappable = unmappableEventReason(envelope.event, envelope.payload);
    // Read before the store is tried: a failure reading the event is a bug, never the
    // database out of reach (the 503 that asks the platform to retry).
    const identityKey = origin.identityKey ?? dedupeKey(envelope);
    const form = storedForm(envelope, rawBody);
    const id = newRowId();
    span?.setAttribute(SPAN_ATTRIBUTES.inboundId, id);
    const mapping = this.tracing.child(span, 'bridge.map', {
      [SPAN_ATTRIBUTES.zoomEvent]: envelope.event,
    });
    const plan = ingestPlan(envelope, eventTs, accountId, origin);
    // The deliveries' attempts continue the publish span; an event left to the inbound job, the
    // request's.
    const publishing =
      plan.then === 'publish'
        ? this.tracing.child(span, 'bridge.publish', {
            [SPAN_ATTRIBUTES.event]: plan.event.kind,
            [SPAN_ATTRIBUTES.eventId]: plan.event.id,
          })
        : null;
    if (mapping !== null) {
      if (plan.then === 'publish') mapping.setAttribute(SPAN_ATTRIBUTES.event, plan.event.kind);
      mapping.end();
    }
    let row: NewInboundEvent;
    let stored: StoredInboundEvent | null;
    try {
      row = {
        id,
        event: envelope.event,
        identityKey,
        eventTs,
        accountId,
        ...form,
        trackingId,
        via,
        downloadTokenEncrypted:
          typeof downloadToken === 'string' && downloadToken !== ''
            ? this.cipher.encrypt(downloadToken, 'recording-download-token')
            : null,
        plan,
        leaseMs: this.dispatcher.preLeaseMs(),
        traceContext: traceparentOf(publishing ?? span),
      };
      stored = await this.store.insert(row).catch((error: unknown) => {
        if (!isDataException(error)) throw error;
        // Nothing the platform sends may be refused or lost (docs/operations.md): what
        // PostgreSQL still would not take as JSON is kept as its bytes, and the inbound job
        // maps and delivers it from them.
        this.logger.error(
          `inbound ${envelope.event} ${id} (tracking id ${trackingId}) cannot be stored as ` +
            `JSON (${(error as Error).message}): kept as its bytes, processed from them`,
        );
        return this.store.insert({
          ...row,
          payload: { event: envelope.event, payload: {} },
          // Never the download token in the clear (undefined is left out).
          rawBody:
            'download_token' in envelope
              ? Buffer.from(stringifyPrecise({ ...envelope, download_token: undefined }), 'utf8')
              : rawBody,
          plan: { then: 'queue' },
        });
      });
    } catch (error) {
      this.tracing.failed(publishing, error);
      publishing?.end();
      throw this.storeFailure(envelope.event, error, span, via);
    }
    publishing?.setAttribute(SPAN_ATTRIBUTES.deliveries, stored?.deliveries.length ?? 0);
    publishing?.end();
    if (stored === null) {
      this.count(envelope.event, 'duplicate', span, via);
      return { status: 'duplicate' };
    }
    if (unmappable) {
      this.count(envelope.event, 'unmappable', span, via);
      this.logger.warn(
        `inbound ${envelope.event} ${id} (tracking id ${trackingId}) cannot be mapped ` +
          `(${unmappable}): kept, and delivered only as it came`,
      );
    } else {
      this.count(envelope.event, 'accepted', span, via);
    }
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

  /** Only PostgreSQL out of reach (or refusing) gets here: the platform is asked to retry. */
  private storeFailure(
    event: string,
    error: unknown,
    span: Span | null,
    via: InboundVia,
  ): ApiError {
    this.count(event, 'unavailable', span, via);
    this.logger.error(`could not store inbound ${event}: ${(error as Error).message}`);
    return new ApiError(
      HttpStatus.SERVICE_UNAVAILABLE,
      'Events cannot be stored right now; the platform will retry',
    );
  }

  private count(event: string, outcome: Outcome, span: Span | null, via: InboundVia): void {
    this.metrics.inboundEvents.inc({ event, outcome, via });
    span?.setAttribute(SPAN_ATTRIBUTES.outcome, outcome);
  }
}
