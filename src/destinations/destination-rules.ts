import { BrokerConfig } from '../config/config.types';
import { FieldRule, quote } from '../common/field-rule';
import type { DestinationBase } from './destination-provider';
import { DESTINATIONS, Destination, DestinationRegistry } from './registry';

/** A problem with a field of the destination, for a 400 or a failed attempt. */
export interface DestinationProblem {
  field: string;
  message: string;
}

/** The fields a destination of `type` may have. */
const fieldsOf = (registry: DestinationRegistry, type: string): string[] => [
  'type',
  ...Object.keys(registry.get(type)?.properties ?? {}),
];

/** The shape of `destination` under `registry`'s types; which brokers exist is the service's. */
export const destinationRuleOf =
  (registry: DestinationRegistry): FieldRule =>
  (value, field) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      return `${field} must be an object such as {"type": "${registry.defaultDestination.type}"}`;
    }
    const d = value as Record<string, unknown>;
    const provider = typeof d.type === 'string' ? registry.get(d.type) : undefined;
    if (provider === undefined) {
      return `${field}.type must be one of ${registry.types.join(', ')}, got ${quote(d.type)}`;
    }
    const fields = fieldsOf(registry, provider.type);
    const unknown = Object.keys(d).filter((k) => !fields.includes(k));
    if (unknown.length > 0) {
      return `${field}.${unknown[0]} is not a field of a ${provider.type} destination`;
    }
    if (provider.broker && (typeof d.broker !== 'string' || d.broker === '')) {
      return `${field}.broker must name a broker of DESTINATION_BROKERS`;
    }
    return provider.check(d, field);
  };

/** The shape of `destination` (docs/destinations.md). */
export const destinationRule: FieldRule = destinationRuleOf(DESTINATIONS);

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
  destination: Destination | DestinationBase,
  brokers: BrokerConfig[],
  clientId: string,
  registry: DestinationRegistry = DESTINATIONS,
): DestinationProblem | null {
  const traits = registry.broker(destination.type);
  if (traits === undefined) return null;
  const named = (destination as { broker?: unknown }).broker;
  const field = 'destination.broker';
  const broker = brokers.find((b) => b.name === named);
  if (!broker) {
    return {
      field,
      message: `${field} ${quote(named)} is not a ${destination.type} broker of this service`,
    };
  }
  if (broker.type !== destination.type) {
    return {
      field,
      message: `${field} ${quote(named)} is a ${broker.type} broker, not ${destination.type}`,
    };
  }
  const part = clientPart(broker, clientId);
  if (part === null) return null;
  const place = traits.place;
  const value = String((destination as unknown as Record<string, unknown>)[place.field]);
  if (value.startsWith(part) && value.length > part.length) return null;
  return {
    field: `destination.${place.field}`,
    message:
      `destination.${place.field} must begin with "${part}" (broker ${quote(broker.name)} gives each ` +
      `client a part of its own${place.note ? `; ${place.note}` : ''})`,
  };
}

/**
 * Null when none of `names` is a header the destination's broker acts on rather than carries
 * (docs/destinations.md), else the first: as a custom header it would change where or how the
 * message goes. Kept apart from the HTTP header rules (webhooks/custom-headers.ts): these depend
 * on the destination.
 */
export function brokerHeaderProblem(
  type: string,
  names: string[],
  registry: DestinationRegistry = DESTINATIONS,
): DestinationProblem | null {
  const traits = registry.broker(type);
  if (traits === undefined) return null;
  for (const name of names) {
    const why = traits.actedOnHeader(name.toLowerCase());
    if (why !== null) {
      return {
        field: `headers.${name}`,
        message: `headers.${name}: ${why}; it cannot be a custom header of a ${type} destination`,
      };
    }
  }
  return null;
}
