import { BROKER_SCHEMES } from '../../config/config.types';
import type { DestinationProvider } from '../destination-provider';

/** docs/destinations.md: a publish to an exchange of a RabbitMQ broker of DESTINATION_BROKERS. */
export interface RabbitMqDestinationObject {
  type: 'rabbitmq';
  broker: string;
  exchange: string;
  routing_key: string;
}

// AMQP 0-9-1 short strings; the exchange may be "" (the default exchange: routing key = queue).
const EXCHANGE = /^[A-Za-z0-9_.:-]{0,255}$/;
const PRINTABLE = /^[\x20-\x7e]*$/;
// RabbitMQ's own exchanges (amq.topic is also where its MQTT and STOMP plugins publish).
const BROKER_EXCHANGE = /^amq\./;

export const rabbitMqDestination: DestinationProvider<RabbitMqDestinationObject> = {
  type: 'rabbitmq',
  label: 'RabbitMQ',
  properties: {
    broker: { type: 'string', minLength: 1 },
    exchange: { type: 'string', pattern: '^(?!amq\\.)[A-Za-z0-9_.:-]{0,255}$' },
    routing_key: { type: 'string', maxLength: 255, pattern: '^[\\x20-\\x7e]*$' },
  },
  required: ['broker', 'exchange', 'routing_key'],
  summary:
    "publishes them to a RabbitMQ exchange; RabbitMQ's own exchanges (`amq.*`) and the headers " +
    'it acts on (`CC`, `BCC`, `x-death`) are refused',
  check(d, field) {
    if (typeof d.exchange !== 'string' || !EXCHANGE.test(d.exchange)) {
      return `${field}.exchange must be an exchange name: up to 255 letters, digits, - _ . : ("" is the default exchange)`;
    }
    if (BROKER_EXCHANGE.test(d.exchange)) {
      return `${field}.exchange must not begin with "amq.": those are RabbitMQ's own exchanges`;
    }
    if (
      typeof d.routing_key !== 'string' ||
      Buffer.byteLength(d.routing_key) > 255 ||
      !PRINTABLE.test(d.routing_key)
    ) {
      return `${field}.routing_key must be a string of up to 255 printable ASCII characters`;
    }
    return null;
  },
  broker: {
    schemes: BROKER_SCHEMES.rabbitmq,
    place: { field: 'exchange', note: 'the default exchange "" is not in it' },
    actedOnHeader(name) {
      // Sender-selected distribution: extra routing keys. A text value (a custom header's only
      // kind) makes RabbitMQ close the channel the message came on.
      if (name === 'cc' || name === 'bcc') return 'RabbitMQ routes the message by this header';
      if (name === 'x-death' || /^x-(first|last)-death-/.test(name)) {
        return "RabbitMQ's record of dead-lettering, which consumers trust";
      }
      return null;
    },
    async connect(broker, settings) {
      // Loaded here: the registry is read by the config loader and the CLI, which never send.
      const { RabbitMqBroker } = await import('./rabbitmq.broker');
      const client = new RabbitMqBroker(broker, settings.timeoutMs, rabbitMqDestination.label);
      return {
        open: () => client.link.open(),
        send: (d, target, message, deadline) =>
          client.publish(target.ownerClientId, d.exchange, d.routing_key, message, deadline),
        status: () => client.link.status(),
        close: () => client.close(),
      };
    },
  },
};
