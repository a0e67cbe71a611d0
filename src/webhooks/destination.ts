import { BrokerConfig } from '../config/config.types';
import { FieldRule, quote } from '../common/field-rule';

/** Where a webhook's deliveries go (SPEC §14), as the API shows it and the table stores it. */
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
// A NATS subject to publish to: dot-separated tokens, no wildcards, no white space.
const SUBJECT = /^[^\s.*>]+(\.[^\s.*>]+)*$/;
const PRINTABLE = /^[\x20-\x7e]*$/;

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
    return `${field}.subject must be a NATS subject to publish to: dot-separated tokens, no wildcards or spaces, up to 255 characters`;
  }
  return null;
};

/** Null when the destination's broker is configured with its type, else the reason. */
export function brokerProblem(destination: Destination, brokers: BrokerConfig[]): string | null {
  if (destination.type === 'http') return null;
  const broker = brokers.find((b) => b.name === destination.broker);
  if (!broker) {
    const names = brokers.filter((b) => b.type === destination.type).map((b) => b.name);
    return (
      `destination.broker ${quote(destination.broker)} is not a configured ${destination.type} broker` +
      (names.length > 0 ? `; configured: ${names.join(', ')}` : ' (none is configured)')
    );
  }
  if (broker.type !== destination.type) {
    return `destination.broker ${quote(destination.broker)} is a ${broker.type} broker, not ${destination.type}`;
  }
  return null;
}
