import { JetStreamClient, NatsConnection, NatsError, connect, headers as natsHeaders } from 'nats';
import { BrokerConfig } from '../../config/config.types';
import { BrokerLink } from '../brokers/broker-link';
import {
  OutgoingMessage,
  TransportResult,
  describeError,
  failed,
  beforeDeadline,
  Deadline,
} from '../transport';

/**
 * One NATS broker of DESTINATION_BROKERS: a long-lived connection, opened at the worker's start,
 * which the client library reconnects on its own for as long as it takes (the link opens
 * another only if the first never came or the client gave up). An attempt is a
 * JetStream publish with `Nats-Msg-Id` = the delivery id (the stream drops a duplicate within
 * its window) and succeeds on the stream's acknowledgement; a subject no stream takes fails,
 * naming the subject.
 */
export class NatsBroker {
  /** Its connection, which also answers for it in /health/ready and opens at the worker's start. */
  readonly link: BrokerLink<{ nc: NatsConnection; js: JetStreamClient }>;

  constructor(config: BrokerConfig, connectTimeoutMs: number, label: string) {
    this.link = new BrokerLink(config, label, async (dropped) => {
      const nc = await connect({
        servers: config.url,
        name: 'meeting-event-bridge',
        timeout: connectTimeoutMs,
        reconnect: true,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 1000,
      });
      void this.watch(nc, dropped);
      return { nc, js: nc.jetstream() };
    });
  }

  async publish(
    subject: string,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    let js: JetStreamClient;
    try {
      ({ js } = await beforeDeadline(this.link.connect(), deadline));
    } catch (error) {
      return this.link.unreachable(error, deadline);
    }
    const h = natsHeaders();
    for (const [name, value] of Object.entries(message.headers)) h.set(name, value);
    try {
      const ack = await beforeDeadline(
        js.publish(subject, message.body, {
          // Set last, as Nats-Msg-Id: a custom header cannot replace it.
          msgID: message.deliveryId,
          headers: h,
          timeout: Math.max(1, deadline.remainingMs()),
        }),
        deadline,
      );
      void ack;
      return { ok: true, statusCode: null, error: null, responseBody: null };
    } catch (error) {
      if (deadline.passed) return failed(`timed out waiting for the JetStream acknowledgement`);
      const code = (error as NatsError).code;
      // A JetStream publish that no stream listens to has no responder.
      if (code === '503') {
        return failed(`no JetStream stream takes subject "${subject}" (NATS: no responders)`);
      }
      if (code === 'TIMEOUT') return failed('timed out waiting for the JetStream acknowledgement');
      return failed(`NATS: ${this.link.hide(describeError(error))}`);
    }
  }

  close(): Promise<void> {
    return this.link.close(({ nc }) => nc.close());
  }

  /** Follows the client's own reconnection, for the readiness answer and the log. */
  private async watch(nc: NatsConnection, dropped: () => void): Promise<void> {
    for await (const s of nc.status()) {
      if (s.type === 'disconnect') {
        this.link.interrupted('the client reconnects on its own');
      } else if (s.type === 'reconnect') {
        this.link.resumed();
      } else if (s.type === 'error') {
        this.link.noteError(String(s.data));
      }
    }
    // The status stream ends when the connection is closed for good.
    dropped();
  }
}
