import { newRowId } from '../database/row-id';
import { InjectQueue } from '@nestjs/bull';
import { HttpStatus, Injectable, Logger, Optional } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import type { Queue } from 'bull';
import { ApiError } from '../common/api-error';
import { MicroBatcher } from '../common/micro-batch';
import { holdsImpreciseNumber, storableCopy, stringifyPrecise } from '../common/precise-json';
import { MetricsService } from '../metrics/metrics.service';
import { QUEUES } from '../queue/queue.constants';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { dedupeKey } from './dedupe-key';
import { isUtf8 } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { DispatcherService } from '../dispatcher/publish/dispatcher.service';
import { asRecord, unmappableEventReason } from './event-mapping';
import { asString } from './platform-reader';
import {
  InboundEventStore,
  NewInboundEvent,
  StoredInboundEvent,
  isDataException,
} from './inbound-event.store';
import { InboundJobData, inboundJob, ingestPlan } from './inbound-job';
import type { InboundVia } from '../common/inbound-via';
import { MALFORMED, PlatformEnvelope, parseEnvelope } from './platform-envelope';
import { SPAN_ATTRIBUTES, Tracing, traceparentOf } from '../telemetry/tracing';

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

export type InboundOutcome = 'accepted' | 'duplicate' | 'unmappable' | 'rejected' | 'unavailable';

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
 * The one ingest every source (src/inbound/sources/) stores through. A mapped event is
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
    private readonly store: InboundEventStore,
    @InjectQueue(QUEUES.inbound) private readonly queue: Queue<InboundJobData>,
    private readonly metrics: MetricsService,
    private readonly cipher: SecretCipherService,
    private readonly dispatcher: DispatcherService,
    @Optional() private readonly tracing: Tracing = Tracing.off,
  ) {}

  /**
   * One platform event as its JSON bytes, from whichever source (src/inbound/sources/): stored,
   * de-duplicated, mapped and delivered alike. The source has vouched for it (the webhook
   * checked its signature; the socket and reconciliation need none: docs/inbound-sources.md).
   */
  async ingest(
    rawBody: Buffer,
    origin: InboundOrigin,
    span: Span | null = null,
  ): Promise<InboundAck> {
    const envelope = parseEnvelope(rawBody, () =>
      this.count(MALFORMED, 'rejected', span, origin.via),
    );
    span?.setAttribute(SPAN_ATTRIBUTES.zoomEvent, envelope.event);
    return this.ingestParsed(envelope, rawBody, origin, span);
  }

  /** ingest() of an envelope its source has parsed already (to answer it first, if need be). */
  async ingestParsed(
    envelope: PlatformEnvelope & Record<string, unknown>,
    rawBody: Buffer,
    origin: InboundOrigin,
    span: Span | null,
  ): Promise<InboundAck> {
    const { trackingId, via } = origin;
    const downloadToken = envelope.download_token;
    const eventTs = Number.isSafeInteger(envelope.event_ts) ? (envelope.event_ts as number) : null;
    // Read before the store is tried: a failure reading the event is a bug, never the
    // database out of reach (the 503 that asks the platform to retry).
    const form = storedForm(envelope, rawBody);
    const accountId = asString(asRecord(envelope.payload).account_id);
    const unmappable = unmappableEventReason(envelope.event, envelope.payload);
    const identityKey = origin.identityKey ?? dedupeKey(envelope);
    const id = newRowId();
    span?.setAttribute(SPAN_ATTRIBUTES.inboundId, id);
    // bridge.map covers making the plan; its spans are started once the plan says what it maps to.
    const mappingFrom = performance.now();
    const plan = ingestPlan(envelope, unmappable, { eventTs, accountId, trackingId, via });
    // The deliveries' attempts continue the publish span; an event left to the inbound job, the
    // request's.
    const publishing = this.tracing.ingestSpans(
      span,
      envelope.event,
      mappingFrom,
      plan.then === 'publish' ? plan.event : null,
    );
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
    this.count(
      envelope.event,
      stored === null ? 'duplicate' : unmappable ? 'unmappable' : 'accepted',
      span,
      via,
    );
    if (stored === null) return { status: 'duplicate' };
    if (unmappable) {
      this.logger.warn(
        `inbound ${envelope.event} ${id} (tracking id ${trackingId}) cannot be mapped ` +
          `(${unmappable}): kept, and delivered only as it came`,
      );
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

  /** Counts an event (inbound_events_total) and marks the outcome on its span. */
  count(event: string, outcome: InboundOutcome, span: Span | null, via: InboundVia): void {
    this.metrics.inboundEvents.inc({ event, outcome, via });
    span?.setAttribute(SPAN_ATTRIBUTES.outcome, outcome);
  }
}
