import { Agent, Dispatcher } from 'undici';
import { checkWebhookUrl } from './ssrf-policy';
import type { DestinationSender, SenderSettings, SendTarget } from '../destination-provider';
import {
  Deadline,
  OutgoingMessage,
  TransportResult,
  beforeDeadline,
  describeError,
  failed,
} from '../transport';
import { createDeliveryAgent } from './delivery-agent';

/** How much of a receiver's answer is kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

/** PostgreSQL text holds no NUL; a receiver's answer may. */
export function excerptText(bytes: Buffer): string {
  return bytes.subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8').replaceAll('\u0000', '\uFFFD');
}

/** What an HTTP attempt came to: an answer read to its end, or why there was none. */
type Exchange =
  | { answered: false; error: unknown }
  | {
      answered: true;
      statusCode: number;
      retryAfter: string | string[] | undefined;
      excerpt: string;
      /** The body failed part-way (a reset, the deadline): null when it arrived whole. */
      bodyError: unknown;
    };

/**
 * One POST through undici's dispatcher, answered by handler callbacks rather than `request()`'s
 * body stream and AbortSignal: per delivery those cost about as much again as the rest of the
 * client (figures in docs/benchmarks.md). The answer is read to its end however long, keeping
 * its start for the delivery log: stopping early would count a body that never ends as a
 * success. The deadline stops the request where it is (connecting, waiting for the answer or
 * reading it); one not yet on a connection is given up at once, and stopped if it gets one.
 */
function exchange(
  agent: Dispatcher,
  url: URL,
  message: OutgoingMessage,
  deadline: Deadline,
): Promise<Exchange> {
  return new Promise((resolve) => {
    let controller: Dispatcher.DispatchController | null = null;
    /** 0 until the answer's head arrived. */
    let statusCode = 0;
    let retryAfter: string | string[] | undefined;
    let settled = false;
    const kept: Buffer[] = [];
    let keptBytes = 0;
    const settle = (outcome: Exchange) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const excerpt = () => excerptText(Buffer.concat(kept));
    const timer = setTimeout(() => {
      deadline.expire();
      const reason = new Error("the attempt's deadline passed");
      if (controller !== null) controller.abort(reason);
      // Not on a connection yet: nobody waits for it; onRequestStart stops it if it gets one.
      else settle({ answered: false, error: reason });
    }, deadline.remainingMs());
    agent.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: message.headers,
        body: message.body,
      },
      {
        onRequestStart(c) {
          controller = c;
          if (deadline.passed) c.abort(new Error("the attempt's deadline passed"));
        },
        onResponseStart(_c, status, headers) {
          // Interim answers are dropped before the parser (interim-responses.ts).
          statusCode = status;
          retryAfter = headers['retry-after'];
        },
        onResponseData(_c, chunk) {
          if (keptBytes >= RESPONSE_EXCERPT_BYTES) return;
          const part = chunk.subarray(0, RESPONSE_EXCERPT_BYTES - keptBytes);
          kept.push(part);
          keptBytes += part.length;
        },
        onResponseEnd() {
          settle({
            answered: true,
            statusCode,
            retryAfter,
            excerpt: excerpt(),
            bodyError: null,
          });
        },
        onResponseError(_c, error) {
          settle(
            statusCode === 0
              ? { answered: false, error }
              : { answered: true, statusCode, retryAfter, excerpt: excerpt(), bodyError: error },
          );
        },
      },
    );
  });
}

/**
 * docs/api.md#notifications: a POST to the webhook's URL, checked against the URL policy at every attempt,
 * through the keep-alive pool. Success is a 2xx whose whole answer arrived in time.
 */
/** An http destination object (http.destination.ts), stated here so the two do not import each other. */
type HttpObject = { type: 'http' };

export class HttpSender implements DestinationSender<HttpObject> {
  private readonly agent: Agent;
  private readonly allowPrivate: boolean;

  constructor(settings: SenderSettings) {
    this.allowPrivate = settings.webhookAllowPrivateUrls;
    this.agent = createDeliveryAgent({
      allowPrivate: this.allowPrivate,
      timeoutMs: settings.timeoutMs,
      connections: settings.concurrency,
    });
  }

  /** The pool connects per receiver, at its first attempt. */
  open(): void {}

  async send(
    _destination: HttpObject,
    target: SendTarget,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    const timedOut = `timed out after ${deadline.ms} ms`;
    const url = target.url;
    if (url === null) return failed('the webhook has an http destination but no url');
    try {
      // Again at every attempt: the name may point elsewhere now than when it was registered.
      await beforeDeadline(checkWebhookUrl(url, { allowPrivate: this.allowPrivate }), deadline);
    } catch (error) {
      return failed(deadline.passed ? `${timedOut} checking the URL` : describeError(error));
    }
    const answer = await exchange(this.agent, new URL(url), message, deadline);
    if (!answer.answered) {
      return failed(deadline.passed ? timedOut : describeError(answer.error));
    }
    // docs/api.md#notifications: a 2xx counts only if the whole answer is in within the deadline.
    const status = answer.statusCode;
    let error: string | null = null;
    if (answer.bodyError !== null) {
      error = deadline.passed
        ? `${timedOut} reading the response body`
        : `HTTP ${status}, then the response body failed: ${describeError(answer.bodyError)}`;
    } else if (status >= 300 && status < 400) {
      error = `HTTP ${status}: redirects are not followed`;
    } else if (status < 200 || status >= 300) {
      error = `HTTP ${status}`;
    }
    const { retryAfter } = answer;
    return {
      ok: error === null,
      statusCode: status,
      error,
      responseBody: answer.excerpt,
      retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : (retryAfter ?? null),
    };
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
