import { Logger } from '@nestjs/common';
import { JetStreamClient, NatsConnection, NatsError, connect, headers as natsHeaders } from 'nats';
import { BrokerConfig } from '../../config/config.types';
import { BrokerState, BrokerStatus, reconnectDelayMs, withoutCredentials } from './broker-status';
import {
  OutgoingMessage,
  TransportResult,
  describeError,
  failed,
  unlessAborted,
} from './transport';

/**
 * One NATS broker of DESTINATION_BROKERS: a long-lived connection, opened at the worker's start,
 * which the client library reconnects on its own for as long as it takes. An attempt is a
 * JetStream publish with `Nats-Msg-Id` = the delivery id (the stream drops a duplicate within
 * its window) and succeeds on the stream's acknowledgement; a subject no stream takes fails,
 * naming the subject.
 */
export class NatsBroker {
  private readonly logger: Logger;
  private connection: Promise<{ nc: NatsConnection; js: JetStreamClient }> | null = null;
  private state: BrokerState = 'not connected yet';
  private lastError: string | undefined;
  private failures = 0;
  private closing = false;

  constructor(
    private readonly config: BrokerConfig,
    private readonly connectTimeoutMs: number,
  ) {
    this.logger = new Logger(`NatsBroker ${config.name}`);
  }

  status(): BrokerStatus {
    return {
      type: 'nats',
      state: this.state,
      ...(this.state !== 'connected' && this.lastError && { error: this.lastError }),
    };
  }

  open(): void {
    this.connect().catch(() => undefined);
  }

  async publish(
    subject: string,
    message: OutgoingMessage,
    signal: AbortSignal,
    deadline: number,
  ): Promise<TransportResult> {
    let js: JetStreamClient;
    try {
      ({ js } = await unlessAborted(this.connect(), signal));
    } catch (error) {
      return failed(
        signal.aborted
          ? `timed out connecting to NATS broker "${this.config.name}"`
          : `NATS broker "${this.config.name}": ${this.hide(describeError(error))}`,
      );
    }
    const h = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
    try {
      const ack = await unlessAborted(
        js.publish(subject, message.body, {
          // Set last, as Nats-Msg-Id: a custom header cannot replace it.
          msgID: message.deliveryId,
          headers: h,
          timeout: Math.max(1, deadline - Date.now()),
        }),
        signal,
      );
      void ack;
      return { ok: true, statusCode: null, error: null, responseBody: null };
    } catch (error) {
      if (signal.aborted) return failed(`timed out waiting for the JetStream acknowledgement`);
      const code = (error as NatsError).code;
      // A JetStream publish that no stream listens to has no responder.
      if (code === '503') {
        return failed(`no JetStream stream takes subject "${subject}" (NATS: no responders)`);
      }
      if (code === 'TIMEOUT') return failed('timed out waiting for the JetStream acknowledgement');
      return failed(`NATS: ${this.hide(describeError(error))}`);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    const open = await this.connection?.catch(() => null);
    await open?.nc.close().catch(() => undefined);
  }

  private connect(): Promise<{ nc: NatsConnection; js: JetStreamClient }> {
    if (this.connection) return this.connection;
    this.state = this.failures > 0 ? 'reconnecting' : 'connecting';
    const connecting = connect({
      servers: this.config.url,
      name: 'meeting-event-bridge',
      timeout: this.connectTimeoutMs,
      reconnect: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 1000,
    }).then(
      (nc) => {
        this.state = 'connected';
        this.failures = 0;
        this.lastError = undefined;
        this.logger.log('connected');
        void this.watch(nc);
        return { nc, js: nc.jetstream() };
      },
      (error: unknown) => {
        // The first connection is ours to retry; once connected, the client reconnects itself.
        this.lastError = this.hide(describeError(error));
        this.state = 'reconnecting';
        this.connection = null;
        if (!this.closing) {
          setTimeout(() => this.open(), reconnectDelayMs(this.failures++)).unref();
        }
        throw new Error(this.lastError);
      },
    );
    this.connection = connecting;
    return connecting;
  }

  /** Follows the client's own reconnection, for the readiness answer and the log. */
  private async watch(nc: NatsConnection): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.state = 'reconnecting';
        this.logger.warn('connection lost; the client reconnects on its own');
      } else if (s.type === 'reconnect') {
        this.state = 'connected';
        this.lastError = undefined;
        this.logger.log('reconnected');
      } else if (s.type === 'error') {
        this.lastError = this.hide(String(s.data));
      }
    }
    // The status stream ends when the connection is closed for good.
    if (!this.closing) {
      this.connection = null;
      this.state = 'reconnecting';
      this.open();
    }
  }

  private hide(text: string): string {
    return withoutCredentials(text, this.config.url);
  }
}
