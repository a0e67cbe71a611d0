import { BROKER_SCHEMES } from '../../config/config.types';
import type { DestinationProvider } from '../destination-provider';

/** docs/destinations.md: a JetStream publish on a NATS broker of DESTINATION_BROKERS. */
export interface NatsDestinationObject {
  type: 'nats';
  broker: string;
  subject: string;
}

// A NATS subject to publish to: dot-separated tokens of printable ASCII but the wildcards * and
// >; no white space, control character or non-ASCII (U+0000, lone surrogates) anywhere.
const SUBJECT_TOKEN = '[!-)+-\\-/-=?-~]+';
const SUBJECT_PATTERN = `^${SUBJECT_TOKEN}(\\.${SUBJECT_TOKEN})*$`;
const SUBJECT = new RegExp(SUBJECT_PATTERN);
// The NATS server's own subjects: $JS.API (stream management), $KV, $SYS, replies to requests.
const SERVER_SUBJECT = /^(\$|_INBOX)/;

export const natsDestination: DestinationProvider<NatsDestinationObject> = {
  type: 'nats',
  label: 'NATS',
  properties: {
    broker: { type: 'string', minLength: 1 },
    subject: {
      type: 'string',
      maxLength: 255,
      pattern: `^(?![$]|_INBOX)${SUBJECT_PATTERN.slice(1)}`,
    },
  },
  required: ['broker', 'subject'],
  summary:
    "publishes them to a NATS JetStream subject; the NATS server's subjects (`$…`, `_INBOX…`) " +
    'and the headers JetStream acts on (`Nats-*`) are refused',
  check(d, field) {
    if (typeof d.subject !== 'string' || d.subject.length > 255 || !SUBJECT.test(d.subject)) {
      return `${field}.subject must be a NATS subject to publish to: dot-separated tokens of printable ASCII, no wildcards (* >) or spaces, up to 255 characters`;
    }
    if (SERVER_SUBJECT.test(d.subject)) {
      return `${field}.subject must not begin with "$" or "_INBOX": those are the NATS server's own subjects (JetStream API, system, replies)`;
    }
    return null;
  },
  broker: {
    schemes: BROKER_SCHEMES.nats,
    place: { field: 'subject' },
    actedOnHeader: (name) =>
      name.startsWith('nats-')
        ? 'NATS JetStream acts on Nats-* headers (de-duplication, expected sequence, rollup, TTL)'
        : null,
    async connect(broker, settings) {
      // Loaded here: the registry is read by the config loader and the CLI, which never send.
      const { NatsBroker } = await import('./nats.broker');
      const client = new NatsBroker(broker, settings.timeoutMs, natsDestination.label);
      return {
        open: () => client.link.open(),
        send: (d, _target, message, deadline) => client.publish(d.subject, message, deadline),
        status: () => client.link.status(),
        close: () => client.close(),
      };
    },
  },
};
