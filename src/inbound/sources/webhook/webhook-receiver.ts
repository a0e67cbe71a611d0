import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../../../common/api-error';
import { VIA } from '../../../common/inbound-via';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { SPAN_ATTRIBUTES } from '../../../telemetry/tracing';
import {
  ZOOM_SIGNATURE_HEADER,
  ZOOM_TIMESTAMP_HEADER,
  ZOOM_TRACKING_HEADER,
  verifyZoomSignature,
} from '../../../zoom/webhook-signature';
import { asRecord } from '../../event-mapping';
import { InboundAck, InboundService } from '../../inbound.service';
import { MALFORMED, URL_VALIDATION_EVENT, parseEnvelope } from '../../platform-envelope';
import { CrcAnswer, answerCrcChallenge } from './crc-challenge';

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
 * POST /zoom/events (docs/api.md#platform-events-post-zoomevents), behind the controller and
 * the fast path alike: verify the signature, answer the URL validation, or store the event
 * through the one ingest.
 */
@Injectable()
export class WebhookReceiver {
  private readonly logger = new Logger(WebhookReceiver.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly inbound: InboundService,
  ) {}

  /** `span`: the request's span (docs/operations.md), which gets the event's attributes; null: none. */
  async receive(
    headers: IncomingHttpHeaders,
    rawBody: Buffer,
    span: Span | null = null,
  ): Promise<CrcAnswer | InboundAck> {
    const secrets = this.config.zoom.webhookSecretTokens;
    if (secrets.length === 0) {
      this.inbound.count(UNVERIFIED, 'unavailable', span, VIA.webhook);
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
      this.inbound.count(UNVERIFIED, 'rejected', span, VIA.webhook);
      this.logger.warn(`inbound event refused: ${check.message} (tracking id ${trackingId})`);
      throw new ApiError(HttpStatus.UNAUTHORIZED, check.message);
    }
    const envelope = parseEnvelope(rawBody, () =>
      this.inbound.count(MALFORMED, 'rejected', span, VIA.webhook),
    );
    span?.setAttribute(SPAN_ATTRIBUTES.zoomEvent, envelope.event);
    if (envelope.event === URL_VALIDATION_EVENT) {
      this.inbound.count(envelope.event, 'accepted', span, VIA.webhook);
      // parseEnvelope checked it is a string.
      const plainToken = asRecord(envelope.payload).plainToken as string;
      return answerCrcChallenge(check.secret, plainToken);
    }
    return this.inbound.ingestParsed(envelope, rawBody, { via: VIA.webhook, trackingId }, span);
  }
}
