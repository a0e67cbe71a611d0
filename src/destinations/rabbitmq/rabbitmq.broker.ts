import * as amqp from 'amqplib';
import { BrokerConfig } from '../../config/config.types';
import { APP_VERSION } from '../../common/version';
import { BrokerLink } from '../brokers/broker-link';
import {
  OutgoingMessage,
  TransportResult,
  describeError,
  failed,
  beforeDeadline,
  Deadline,
} from '../transport';

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
 * channel per client and exchange: the server closes a channel over one message (an exchange
 * that does not exist, a header it refuses), failing every publish awaiting a confirm on it,
 * so what one client sends never fails another's deliveries nor shows them its error. A
 * closed channel is opened again at the next attempt. An attempt publishes persistent and mandatory, and
 * succeeds when the broker confirms it; a message the broker returns (no queue bound for its
 * routing key) fails, with the broker's reply.
 */
export class RabbitMqBroker {
  /** Its connection, which also answers for it in /health/ready and opens at the worker's start. */
  readonly link: BrokerLink<amqp.ChannelModel>;
  private readonly channels = new Map<string, Promise<ExchangeChannel>>();

  constructor(config: BrokerConfig, connectTimeoutMs: number, label: string) {
    this.link = new BrokerLink(
      config,
      label,
      async (dropped) => {
        const connection = await amqp.connect(config.url, {
          timeout: connectTimeoutMs,
          clientProperties: { connection_name: 'meeting-event-bridge' },
        });
        connection.on('error', (error: Error) => this.link.noteError(describeError(error)));
        connection.on('close', dropped);
        return connection;
      },
      () => this.channels.clear(),
    );
  }

  async publish(
    clientId: string,
    exchange: string,
    routingKey: string,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    let ch: ExchangeChannel;
    try {
      ch = await beforeDeadline(this.channel(clientId, exchange), deadline);
    } catch (error) {
      return this.link.unreachable(error, deadline);
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
          resolve(failed(`RabbitMQ did not confirm the message: ${this.link.hide(reason)}`));
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
      return await beforeDeadline(confirmed, deadline);
    } catch {
      ch.returned.delete(key);
      return failed(`timed out waiting for RabbitMQ's confirm`);
    }
  }

  close(): Promise<void> {
    return this.link.close((connection) => connection.close());
  }

  private channel(clientId: string, exchange: string): Promise<ExchangeChannel> {
    // Neither a client id nor an exchange name holds a line break.
    const key = `${clientId}\n${exchange}`;
    let channel = this.channels.get(key);
    if (!channel) {
      const forget = () => {
        if (this.channels.get(key) === opening) this.channels.delete(key);
      };
      const opening = this.openChannel(forget);
      opening.catch(forget);
      this.channels.set(key, (channel = opening));
    }
    return channel;
  }

  private async openChannel(onClose: () => void): Promise<ExchangeChannel> {
    const connection = await this.link.connect();
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
}
