import { BrokerConfig } from '../config/config.types';
import { FieldRule, quote } from '../common/field-rule';

/** Where a webhook's deliveries go (docs/destinations.md), as the API shows it and the table stores it. */
export type Destination =
  | { type: 'http' }
  | { type: 'rabbitmq'; broker: string; exchange: string; routing_key: string }
  | { type: 'nats'; broker: string; subject: string };
export type DestinationType = Destination['type'];

export const DESTINATION_TYPES = ['http', 'rabbitmq', 'nats'] as const;
export const BROKER_DESTINATION_TYPES = ['rabbitmq', 'nats'] as const;
export const HTTP_DESTINATION: Destination = { type: 'http' };

const FIELDS: Record<DestinationType, string[]> = {
  http: ['type'],
  rabbitmq: ['type', 'broker', 'exchange', 'routing_key'],
  nats: ['type', 'broker', 'subject'],
};

// AMQP 0-9-1 short strings; the exchange may be "" (the default exchange: routing key = queue).
const EXCHANGE = /^[A-Za-z0-9_.:-]{0,255}$/;
// A NATS subject to publish to: dot-separated tokens of printable ASCII but the wildcards * and
// >; no white space, control character or non-ASCII (U+0000, lone surrogates) anywhere.
const SUBJECT_TOKEN = '[!-)+-\\-/-=?-~]+';
export const SUBJECT_PATTERN = `^${SUBJECT_TOKEN}(\\.${SUBJECT_TOKEN})*$`;
const SUBJECT = new RegExp(SUBJECT_PATTERN);
const PRINTABLE = /^[\x20-\x7e]*$/;
// The NATS server's own subjects: $JS.API (stream management), $KV, $SYS, replies to requests.
const SERVER_SUBJECT = /^(\$|_INBOX)/;
// RabbitMQ's own exchanges (amq.topic is also where its MQTT and STOMP plugins publish).
const BROKER_EXCHANGE = /^amq\./;

/** The shape of `destination`; which brokers exist is the service's to check (config). */
export const destinationRule: FieldRule = (value, field) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return `${field} must be an object such as {"type": "http"}`;
  }
  const d = value as Record<string, unknown>;
  if (!(DESTINATION_TYPES as readonly unknown[]).includes(d.type)) {
    return `${field}.type must be one of ${DESTINATION_TYPES.join(', ')}, got ${quote(d.type)}`;
  }
  const type = d.type as DestinationType;
  const unknown = Object.keys(d).filter((k) => !FIELDS[type].includes(k));
  if (unknown.length > 0) {
    return `${field}.${unknown[0]} is not a field of a ${type} destination`;
  }
  if (type === 'http') return null;
  if (typeof d.broker !== 'string' || d.broker === '') {
    return `${field}.broker must name a broker of DESTINATION_BROKERS`;
  }
  if (type === 'rabbitmq') {
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
  }
  if (typeof d.subject !== 'string' || d.subject.length > 255 || !SUBJECT.test(d.subject)) {
    return `${field}.subject must be a NATS subject to publish to: dot-separated tokens of printable ASCII, no wildcards (* >) or spaces, up to 255 characters`;
  }
  if (SERVER_SUBJECT.test(d.subject)) {
    return `${field}.subject must not begin with "$" or "_INBOX": those are the NATS server's own subjects (JetStream API, system, replies)`;
  }
  return null;
};

/** A problem with a field of the destination, for a 400 or a failed attempt. */
export interface DestinationProblem {
  field: string;
  message: string;
  /** A name outside the client's part of the broker: not the client's to publish to (403). */
  forbidden?: boolean;
}

/**
 * The part of `broker` that `clientId` may publish to: what its exchange names or subjects
 * begin with; null when the operator shares the whole broker (docs/destinations.md).
 */
export const clientPart = (broker: BrokerConfig, clientId: string): string | null =>
  broker.namespace === 'client' ? `${broker.prefix}${clientId}.` : null;

/**
 * Null when the destination's broker is configured with its type and the destination lies in
 * the client's part of it, else the reason. A name the client gave may be quoted; what else is
 * configured, and where any broker is, never.
 */
export function brokerProblem(
  destination: Destination,
  brokers: BrokerConfig[],
  clientId: string,
): DestinationProblem | null {
  if (destination.type === 'http') return null;
  const field = 'destination.broker';
  const broker = brokers.find((b) => b.name === destination.broker);
  if (!broker) {
    return {
      field,
      message: `${field} ${quote(destination.broker)} is not a ${destination.type} broker of this service`,
    };
  }
  if (broker.type !== destination.type) {
    return {
      field,
      message: `${field} ${quote(destination.broker)} is a ${broker.type} broker, not ${destination.type}`,
    };
  }
  const part = clientPart(broker, clientId);
  if (part === null) return null;
  const [name, what] =
    destination.type === 'rabbitmq'
      ? (['exchange', destination.exchange] as const)
      : (['subject', destination.subject] as const);
  if (what.startsWith(part) && what.length > part.length) return null;
  return {
    field: `destination.${name}`,
    forbidden: true,
    message:
      `destination.${name} must begin with "${part}" (broker ${quote(broker.name)} gives each ` +
      `client a part of its own${name === 'exchange' ? '; the default exchange "" is not in it' : ''})`,
  };
}
