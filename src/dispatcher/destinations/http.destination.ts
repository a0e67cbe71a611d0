import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { finished } from 'node:stream';
import { Agent, Dispatcher, request } from 'undici';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { checkWebhookUrl } from '../../webhooks/ssrf-policy';
import { createDeliveryAgent } from '../delivery-agent';
import {
  DestinationTransport,
  OutgoingMessage,
  TransportResult,
  describeError,
  failed,
  unlessAborted,
} from './transport';

/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

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
 * SPEC §4: a POST to the webhook's URL, checked against the URL policy at every attempt,
 * through the keep-alive pool. Success is a 2xx whose whole answer arrived in time.
 */
@Injectable()
export class HttpDestination implements DestinationTransport, OnApplicationShutdown {
  private readonly agent: Agent;
  private readonly allowPrivate: boolean;
  private readonly timeoutMs: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.allowPrivate = config.webhookAllowPrivateUrls;
    this.timeoutMs = config.delivery.timeoutMs;
    this.agent = createDeliveryAgent({
      allowPrivate: this.allowPrivate,
      timeoutMs: this.timeoutMs,
      connections: config.delivery.concurrency,
    });
  }

  async send(
    _destination: unknown,
    target: { url: string | null },
    message: OutgoingMessage,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    const timedOut = `timed out after ${this.timeoutMs} ms`;
    const url = target.url;
    if (url === null) return failed('the webhook has an http destination but no url');
    try {
      // Again at every attempt: the name may point elsewhere now than when it was registered.
      await unlessAborted(checkWebhookUrl(url, { allowPrivate: this.allowPrivate }), signal);
    } catch (error) {
      return failed(signal.aborted ? `${timedOut} checking the URL` : describeError(error));
    }
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: 'POST',
        dispatcher: this.agent,
        signal,
        headers: message.headers,
        body: message.body,
      });
    } catch (error) {
      return failed(signal.aborted ? timedOut : describeError(error));
    }
    // SPEC §4: a 2xx counts only if the whole answer is in within the deadline.
    const { excerpt, failure } = await readExcerpt(res.body);
    const status = res.statusCode;
    let error: string | null = null;
    if (failure !== null) {
      error = signal.aborted
        ? `${timedOut} reading the response body`
        : `HTTP ${status}, then the response body failed: ${describeError(failure)}`;
    } else if (status >= 300 && status < 400) {
      error = `HTTP ${status}: redirects are not followed`;
    } else if (status < 200 || status >= 300) {
      error = `HTTP ${status}`;
    }
    const retryAfter = res.headers['retry-after'];
    return {
      ok: error === null,
      statusCode: status,
      error,
      responseBody: excerpt,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
    };
  }

  async onApplicationShutdown(): Promise<void> {
    await this.agent.close();
  }
}
