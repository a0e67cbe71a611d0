import type { DestinationProblem, DestinationType } from './destination';

/**
 * Message headers a broker acts on rather than carries: as custom headers of a broker
 * destination they would change where or how the message goes (docs/destinations.md). Kept
 * apart from the HTTP header rules (custom-headers.ts): these depend on the destination.
 */
const ACTED_ON: Record<DestinationType, ((lower: string) => string | null) | null> = {
  http: null,
  rabbitmq: (name) => {
    // Sender-selected distribution: extra routing keys. A text value (a custom header's only
    // kind) makes RabbitMQ close the channel the message came on.
    if (name === 'cc' || name === 'bcc') return 'RabbitMQ routes the message by this header';
    if (name === 'x-death' || /^x-(first|last)-death-/.test(name)) {
      return "RabbitMQ's record of dead-lettering, which consumers trust";
    }
    return null;
  },
  nats: (name) =>
    name.startsWith('nats-')
      ? 'NATS JetStream acts on Nats-* headers (de-duplication, expected sequence, rollup, TTL)'
      : null,
};

/** Null when none of `names` is a header the destination's broker acts on, else the first. */
export function brokerHeaderProblem(
  type: DestinationType,
  names: string[],
): DestinationProblem | null {
  const actedOn = ACTED_ON[type];
  if (actedOn === null) return null;
  for (const name of names) {
    const why = actedOn(name.toLowerCase());
    if (why !== null) {
      return {
        field: `headers.${name}`,
        message: `headers.${name}: ${why}; it cannot be a custom header of a ${type} destination`,
      };
    }
  }
  return null;
}
