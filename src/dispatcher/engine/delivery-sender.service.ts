import { Inject, Injectable, OnApplicationBootstrap } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { APP_VERSION } from '../../common/version';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { CustomHeaders } from '../../webhooks/custom-headers';
import { DestinationSenders } from '../../destinations/destination-senders';
import { HTTP_DESTINATION, type Destination } from '../../destinations/registry';
import { Deadline, OutgoingMessage, TransportResult, failed } from '../../destinations/transport';
import { SecretCipherService } from '../../webhooks/secret-cipher.service';
import { SigningSecrets, signatureHeaders, unixSeconds } from './delivery-signature';
import { SecretCache } from './secret-cache';

export { RESPONSE_EXCERPT_BYTES, excerptText } from '../../destinations/http/http.sender';

export const USER_AGENT = `meeting-event-bridge/${APP_VERSION}`;
/** Marks a delivery of an ordered webhook sent after a newer event of its meeting. */
export const ORDERING_HEADER = 'x-service-ordering';

export interface DeliveryRequest {
  deliveryId: string;
  event: string;
  /** The webhook's client: a broker destination must lie in its part of the broker. */
  ownerClientId: string;
  /** Where it goes (docs/destinations.md); HTTP when absent. */
  destination?: Destination;
  /** The http destination's URL; null for a broker; a chat destination's masked address. */
  url: string | null;
  /** A chat destination's address, sealed (webhook-url); null or absent for any other. */
  urlEncrypted?: string | null;
  body: string;
  secretEncrypted: string;
  /** The replaced secret while it is in its grace, else null: it then signs too (docs/receiving.md). */
  previousSecretEncrypted: string | null;
  /** The webhook's custom headers, sealed; null or absent when it has none. */
  headersEncrypted?: string | null;
  attempt: number;
  /** Older than an event of its ordering key already delivered (docs/receiving.md#ordered-delivery-per-meeting). */
  late?: boolean;
  /** W3C traceparent of the attempt's span, sent so the receiver continues the trace. */
  traceparent?: string | null;
}

export interface AttemptResult extends TransportResult {
  startedAt: Date;
  durationMs: number;
}

/**
 * Makes one delivery attempt, whatever the destination: signs it, builds its headers (the
 * webhook's custom ones, then those of docs/api.md#notifications and docs/receiving.md, which a custom header never replaces)
 * and hands the message to the destination's sender (src/destinations/), under one deadline of
 * DELIVERY_TIMEOUT_MS. Never throws: every outcome is an AttemptResult to record. What calls it
 * (the attempt, and the scheduling above it) does not know the destination's type.
 */
@Injectable()
export class DeliverySenderService implements OnApplicationBootstrap {
  private readonly timeoutMs: number;
  private readonly secrets = new SecretCache();
  private readonly headers = new SecretCache();
  private readonly urls = new SecretCache();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly cipher: SecretCipherService,
    private readonly destinations: DestinationSenders,
  ) {
    this.timeoutMs = config.delivery.timeoutMs;
  }

  /** A worker connects to its brokers as it starts, not at its first delivery. */
  onApplicationBootstrap(): void {
    this.destinations.open();
  }

  async send(req: DeliveryRequest): Promise<AttemptResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const timed = (r: TransportResult): AttemptResult => ({
      ...r,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
    });

    let secrets: SigningSecrets;
    let custom: CustomHeaders;
    try {
      const decrypt = (sealed: string) =>
        this.secrets.get(sealed, (ciphertext) => this.cipher.decrypt(ciphertext));
      secrets = {
        current: decrypt(req.secretEncrypted),
        previous:
          req.previousSecretEncrypted === null ? null : decrypt(req.previousSecretEncrypted),
      };
    } catch {
      return timed(
        failed('the webhook secret cannot be decrypted (was SECRETS_ENCRYPTION_KEY changed?)'),
      );
    }
    try {
      custom = req.headersEncrypted
        ? (JSON.parse(
            this.headers.get(req.headersEncrypted, (ciphertext) =>
              this.cipher.decrypt(ciphertext, 'webhook-headers'),
            ),
          ) as CustomHeaders)
        : {};
    } catch {
      return timed(
        failed('the custom headers cannot be decrypted (was SECRETS_ENCRYPTION_KEY changed?)'),
      );
    }

    let url = req.url;
    if (req.urlEncrypted) {
      try {
        url = this.urls.get(req.urlEncrypted, (c) => this.cipher.decrypt(c, 'webhook-url'));
      } catch {
        return timed(
          failed('the chat address cannot be decrypted (was SECRETS_ENCRYPTION_KEY changed?)'),
        );
      }
    }

    const body = Buffer.from(req.body, 'utf8');
    const message: OutgoingMessage = {
      deliveryId: req.deliveryId,
      event: req.event,
      attempt: req.attempt,
      body,
      headers: {
        ...custom,
        'content-type': 'application/json',
        // Signed now, per attempt: a retry carries a fresh webhook-timestamp (docs/receiving.md).
        ...signatureHeaders({
          deliveryId: req.deliveryId,
          body,
          timestamp: unixSeconds(new Date()),
          secrets,
        }),
        'x-service-event': req.event,
        'x-service-delivery': req.deliveryId,
        'x-service-attempt': String(req.attempt),
        ...(req.late && { [ORDERING_HEADER]: 'late' }),
        'user-agent': USER_AGENT,
        ...(req.traceparent ? { traceparent: req.traceparent } : {}),
      },
    };

    // One deadline for the whole attempt (a URL check's DNS lookup, a broker's connection and
    // its confirm included): nothing holds a delivery slot past DELIVERY_TIMEOUT_MS.
    const deadline = new Deadline(this.timeoutMs);
    const destination = req.destination ?? HTTP_DESTINATION;
    return timed(await this.destinations.send(destination, { ...req, url }, message, deadline));
  }
}
