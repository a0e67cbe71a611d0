import { Logger } from '@nestjs/common';
import * as amqp from 'amqplib';
import { BrokerConfig } from '../../config/config.types';
import { APP_VERSION } from '../../common/version';
import { BrokerState, BrokerStatus, reconnectDelayMs, withoutCredentials } from './broker-status';
import {
  OutgoingMessage,
  TransportResult,
  describeError,
  failed,
  unlessAborted,
} from './transport';

interface Returned {
  replyCode: number;
  replyText: string;
}

/** A confirm channel for one exchange, with the messages the broker returned as unroutable. */
interface ExchangeChannel {
  channel: amqp.ConfirmChannel;
  /** By delivery id and attempt: filled by basic.return, which comes before the ack. */
  returned: Map<string, Returned>;
  /** Why the server closed the channel (e.g. 404 NOT_FOUND, no such exchange). */
  closedBy: string | null;
}

const keyOf = (deliveryId: string, attempt: string | number) => `${deliveryId}/${attempt}`;

/**
 * One RabbitMQ broker of DESTINATION_BROKERS: a long-lived connection, opened at the worker's
 * start, and opened again on its own after it drops (with a growing wait), and one confirm
 * channel per exchange, so an exchange that does not exist (the server then closes the
 * channel) fails only the attempts to it. An attempt publishes persistent and mandatory, and
 * succeeds when the broker confirms it; a message the broker returns (no queue bound for its
 * routing key) fails, with the broker's reply.
 */
export class RabbitMqBroker {
  private readonly logger: Logger;
  private connection: Promise<amqp.ChannelModel> | null = null;
  private readonly channels = new Map<string, Promise<ExchangeChannel>>();
  private state: BrokerState = 'not connected yet';
  private lastError: string | undefined;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    private readonly config: BrokerConfig,
    private readonly connectTimeoutMs: number,
  ) {
    this.logger = new Logger(`RabbitMqBroker ${config.name}`);
  }

  status(): BrokerStatus {
    return {
      type: 'rabbitmq',
      state: this.state,
      ...(this.state !== 'connected' && this.lastError && { error: this.lastError }),
    };
  }

  /** Opens the connection now rather than at the first attempt. */
  open(): void {
    this.connect().catch(() => undefined);
  }

  async publish(
    exchange: string,
    routingKey: string,
    message: OutgoingMessage,
    signal: AbortSignal,
  ): Promise<TransportResult> {
    let ch: ExchangeChannel;
    try {
      ch = await unlessAborted(this.channel(exchange), signal);
    } catch (error) {
      return failed(
        signal.aborted
          ? `timed out connecting to RabbitMQ broker "${this.config.name}"`
          : `RabbitMQ broker "${this.config.name}": ${this.hide(describeError(error))}`,
      );
    }
    const key = keyOf(message.deliveryId, message.attempt);
    const confirmed = new Promise<TransportResult>((resolve) => {
      const done = (error: unknown) => {
        const returned = ch.returned.get(key);
        ch.returned.delete(key);
        if (returned) {
          resolve(
            failed(
              `RabbitMQ returned the message as unroutable: ${returned.replyCode} ` +
                `${returned.replyText} (exchange "${exchange}", routing key "${routingKey}")`,
            ),
          );
        } else if (error) {
          const reason = ch.closedBy ?? describeError(error);
          resolve(failed(`RabbitMQ did not confirm the message: ${this.hide(reason)}`));
        } else {
          resolve({ ok: true, statusCode: null, error: null, responseBody: null });
        }
      };
      try {
        ch.channel.publish(
          exchange,
          routingKey,
          message.body,
          {
            persistent: true,
            mandatory: true,
            contentType: 'application/json',
            messageId: message.deliveryId,
            type: message.event,
            appId: `meeting-event-bridge/${APP_VERSION}`,
            headers: message.headers,
          },
          done,
        );
      } catch (error) {
        done(error);
      }
    });
    try {
      return await unlessAborted(confirmed, signal);
    } catch {
      ch.returned.delete(key);
      return failed(`timed out waiting for RabbitMQ's confirm`);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const connection = await this.connection?.catch(() => null);
    await connection?.close().catch(() => undefined);
  }

  private channel(exchange: string): Promise<ExchangeChannel> {
    let channel = this.channels.get(exchange);
    if (!channel) {
      const forget = () => {
        if (this.channels.get(exchange) === opening) this.channels.delete(exchange);
      };
      const opening = this.openChannel(forget);
      opening.catch(forget);
      this.channels.set(exchange, (channel = opening));
    }
    return channel;
  }

  private async openChannel(onClose: () => void): Promise<ExchangeChannel> {
    const connection = await this.connect();
    const channel = await connection.createConfirmChannel();
    const ch: ExchangeChannel = { channel, returned: new Map(), closedBy: null };
    channel.on('return', (msg: amqp.Message) => {
      const attempt = (msg.properties.headers ?? {})['x-service-attempt'] as string | undefined;
      // basic.return's fields; the typings know only those of a delivered message.
      const fields = msg.fields as unknown as Returned;
      ch.returned.set(keyOf(String(msg.properties.messageId), attempt ?? ''), {
        replyCode: fields.replyCode,
        replyText: fields.replyText,
      });
    });
    channel.on('error', (error: Error) => {
      ch.closedBy = error.message;
    });
    channel.on('close', onClose);
    return ch;
  }

  private connect(): Promise<amqp.ChannelModel> {
    if (this.connection) return this.connection;
    this.state = this.failures > 0 || this.state === 'reconnecting' ? 'reconnecting' : 'connecting';
    const connecting = amqp
      .connect(this.config.url, {
        timeout: this.connectTimeoutMs,
        clientProperties: { connection_name: 'meeting-event-bridge' },
      })
      .then(
        (connection) => {
          this.state = 'connected';
          this.failures = 0;
          this.lastError = undefined;
          this.logger.log('connected');
          connection.on('error', (error: Error) => {
            this.lastError = this.hide(describeError(error));
          });
          connection.on('close', () => this.dropped(connecting));
          return connection;
        },
        (error: unknown) => {
          this.lastError = this.hide(describeError(error));
          this.dropped(connecting);
          throw new Error(this.lastError);
        },
      );
    this.connection = connecting;
    return connecting;
  }

  /** The connection is gone: attempts fail (and retry) until it is back, tried on its own. */
  private dropped(which: Promise<amqp.ChannelModel>): void {
    if (this.connection !== which) return;
    this.connection = null;
    this.channels.clear();
    if (this.closing) return;
    if (this.state === 'connected') {
      this.logger.warn(`connection lost${this.lastError ? `: ${this.lastError}` : ''}`);
    }
    this.state = 'reconnecting';
    const delay = reconnectDelayMs(this.failures++);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.connection && !this.closing) this.open();
    }, delay);
    this.reconnectTimer.unref();
  }

  private hide(text: string): string {
    return withoutCredentials(text, this.config.url);
  }
}
