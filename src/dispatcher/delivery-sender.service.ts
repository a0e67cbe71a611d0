import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { finished } from 'node:stream';
import { Agent, Dispatcher, request } from 'undici';
import { APP_VERSION } from '../common/version';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { checkWebhookUrl } from '../webhooks/ssrf-policy';
import { createDeliveryAgent } from './delivery-agent';
import { SigningSecrets, signatureHeaders, unixSeconds } from './delivery-signature';
import { SecretCache } from './secret-cache';

export const USER_AGENT = `meeting-event-bridge/${APP_VERSION}`;
/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024;
const ERROR_MAX_CHARS = 500;

export interface DeliveryRequest {
  deliveryId: string;
  event: string;
  url: string;
  body: string;
  secretEncrypted: string;
  /** The replaced secret while it is in its grace, else null: it then signs too (SPEC §10). */
  previousSecretEncrypted: string | null;
  attempt: number;
  /** Older than an event of its ordering key already delivered (SPEC §15). */
  late?: boolean;
  /** W3C traceparent of the attempt's span, sent so the receiver continues the trace. */
  traceparent?: string | null;
}

/** Marks a delivery of an ordered webhook sent after a newer event of its meeting. */
export const ORDERING_HEADER = 'x-service-ordering';

export interface AttemptResult {
  ok: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  /** First RESPONSE_EXCERPT_BYTES of the answer, null when there was no answer. */
  responseBody: string | null;
  /** The receiver's Retry-After header, as sent (SPEC §9: honoured on 429 and 503). */
  retryAfter?: string | null;
}

/** PostgreSQL text holds no NUL; a receiver's answer may. */
export function excerptText(bytes: Buffer): string {
  return bytes.subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '\uFFFD');
}

/**
 * Reads an answer to its end, keeping its start for the delivery log. A body that fails
 * part-way (the attempt's deadline, a reset) is reported, not swallowed: the receiver may not
 * have finished with the request, so the attempt cannot count as a success. Read to the end
 * however long, since stopping early would count a body that never ends as a success; the
 * attempt's one deadline bounds it. The excerpt keeps what arrived.
 */
function readExcerpt(
  body: Dispatcher.ResponseData['body'],
): Promise<{ excerpt: string; failure: unknown }> {
  // Stream events rather than `for await`: the async iterator costs a promise and its
  // machinery per chunk, on every delivery, for an answer that is usually one chunk or none.
  return new Promise((resolve) => {
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const onData = (chunk: Buffer) => {
      if (keptBytes >= RESPONSE_EXCERPT_BYTES) return;
      const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - keptBytes);
      kept.push(part);
      keptBytes += part.length;
    };
    body.on('data', onData);
    // finished() also reports a body that errored or closed early before this was attached.
    finished(body, (error) => {
      body.off('data', onData);
      resolve({ excerpt: excerptText(Buffer.concat(kept)), failure: error ?? null });
    });
  });
}

/**
 * Rejects when `signal` aborts; the work itself goes on, but nobody waits for it any more. Not
 * withTimeout: the attempt has one deadline, shared by the URL check and the request, and a
 * timer of the check's own would start a second one.
 */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(new Error('aborted'));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([work, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}

function describe(error: unknown): string {
  const err = error as { message?: string; code?: string; cause?: { message?: string } };
  let text = err?.message || String(error);
  if (err?.code && !text.includes(err.code)) text = `${err.code}: ${text}`;
  if (err?.cause?.message && !text.includes(err.cause.message)) text += ` (${err.cause.message})`;
  return text.slice(0, ERROR_MAX_CHARS);
}

/**
 * Makes one delivery attempt: URL policy check, signature, POST through the keep-alive pool
 * with the per-attempt timeout. Never throws: every outcome is an AttemptResult to record.
 */
@Injectable()
export class DeliverySenderService implements OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;
  private readonly secrets = new SecretCache();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly cipher: SecretCipherService,
  ) {
    this.allowPrivate = config.webhookAllowPrivateUrls;
    this.timeoutMs = config.delivery.timeoutMs;
    this.agent = createDeliveryAgent({
      allowPrivate: this.allowPrivate,
      timeoutMs: this.timeoutMs,
      connections: config.delivery.concurrency,
    });
  }

  async send(req: DeliveryRequest): Promise<AttemptResult> {
    const startedAt = new Date();
    const t0 = performance.now();
    const result = (r: Omit<AttemptResult, 'startedAt' | 'durationMs'>): AttemptResult => ({
      ...r,
      startedAt,
      durationMs: Math.round(performance.now() - t0),
    });
    const refused = (error: string) =>
      result({ ok: false, statusCode: null, error, responseBody: null });
    const timedOut = `timed out after ${this.timeoutMs} ms`;

    // One deadline for the whole attempt, the URL check's DNS lookup included: a hung resolver
    // must not hold a delivery slot past DELIVERY_TIMEOUT_MS (its own cap is longer).
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.timeoutMs);
    try {
      try {
        // Again at every attempt: the name may point elsewhere now than when it was registered.
        await unlessAborted(
          checkWebhookUrl(req.url, { allowPrivate: this.allowPrivate }),
          controller.signal,
        );
      } catch (error) {
        return refused(
          controller.signal.aborted ? `${timedOut} checking the URL` : describe(error),
        );
      }
      let secrets: SigningSecrets;
      try {
        const decrypt = (sealed: string) =>
          this.secrets.get(sealed, (ciphertext) => this.cipher.decrypt(ciphertext));
        secrets = {
          current: decrypt(req.secretEncrypted),
          previous:
            req.previousSecretEncrypted === null ? null : decrypt(req.previousSecretEncrypted),
        };
      } catch {
        return refused(
          'the webhook secret cannot be decrypted (was SECRETS_ENCRYPTION_KEY changed?)',
        );
      }

      const body = Buffer.from(req.body, 'utf8');
      let res: Dispatcher.ResponseData;
      try {
        res = await request(req.url, {
          method: 'POST',
          dispatcher: this.agent,
          signal: controller.signal,
          headers: {
            'content-type': 'application/json',
            // Signed now, per attempt: a retry carries a fresh webhook-timestamp (SPEC §10).
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
          body,
        });
      } catch (error) {
        return refused(controller.signal.aborted ? timedOut : describe(error));
      }
      // SPEC §4: a 2xx counts only if the whole answer is in within the deadline.
      const { excerpt, failure } = await readExcerpt(res.body);
      const status = res.statusCode;
      let error: string | null = null;
      if (failure !== null) {
        error = controller.signal.aborted
          ? `${timedOut} reading the response body`
          : `HTTP ${status}, then the response body failed: ${describe(failure)}`;
      } else if (status >= 300 && status < 400) {
        error = `HTTP ${status}: redirects are not followed`;
      } else if (status < 200 || status >= 300) {
        error = `HTTP ${status}`;
      }
      const retryAfter = res.headers['retry-after'];
      return result({
        ok: error === null,
        statusCode: status,
        error,
        responseBody: excerpt,
        retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
      });
    } finally {
      clearTimeout(timer);
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}
