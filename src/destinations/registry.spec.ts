import { BROKER_SCHEMES } from '../config/config.types';
import type { DestinationProvider } from './destination-provider';
import { brokerHeaderProblem, brokerProblem, destinationRuleOf } from './destination-rules';
import {
  createBodyRule,
  destinationRequestSchema,
  destinationResponseSchema,
} from './destination-schema';
import { DESTINATIONS, DESTINATION_PROVIDERS, DestinationRegistry } from './registry';

/** A broker type that exists only here: what a Kafka provider file would hold. */
const queueDestination: DestinationProvider<{ type: 'queue'; broker: string; topic: string }> = {
  type: 'queue',
  label: 'Queue',
  properties: { broker: { type: 'string', minLength: 1 }, topic: { type: 'string' } },
  required: ['broker', 'topic'],
  summary: 'appends them to a topic',
  check: (d, field) => (typeof d.topic === 'string' ? null : `${field}.topic must be a string`),
  broker: {
    schemes: ['queue:'],
    place: { field: 'topic' },
    actedOnHeader: (name) => (name === 'queue-key' ? 'the queue partitions by it' : null),
    connect: () => Promise.reject(new Error('not in a unit spec')),
  },
};

const registry = new DestinationRegistry([...DESTINATION_PROVIDERS, queueDestination]);
const rule = destinationRuleOf(registry);

describe('the destination registry is the one list of types', () => {
  // The loader checks DESTINATION_BROKERS against config's plain list (config imports nothing
  // above it): every broker type has its entry there, and no entry lacks its type.
  it("has the broker types, with their schemes, of config's BROKER_SCHEMES", () => {
    expect(
      Object.fromEntries(DESTINATIONS.brokerTypes.map((t) => [t, DESTINATIONS.broker(t)?.schemes])),
    ).toEqual(BROKER_SCHEMES);
  });

  it('holds http, rabbitmq, nats and the chat tools, http first (the default)', () => {
    expect(DESTINATIONS.types).toEqual(['http', 'rabbitmq', 'nats', 'slack', 'teams', 'discord']);
    expect(DESTINATIONS.chatTypes).toEqual(['slack', 'teams', 'discord']);
    expect(DESTINATIONS.brokerTypes).toEqual(['rabbitmq', 'nats']);
    expect(DESTINATIONS.defaultDestination).toEqual({ type: 'http' });
  });

  it('a registered type is accepted by validation, with its own rules', () => {
    expect(destinationRuleOf(DESTINATIONS)({ type: 'queue' }, 'destination')).toBe(
      'destination.type must be one of http, rabbitmq, nats, slack, teams, discord, got "queue"',
    );
    expect(rule({ type: 'queue', broker: 'q', topic: 't' }, 'destination')).toBeNull();
    expect(rule({ type: 'queue', broker: 'q', topic: 1 }, 'destination')).toBe(
      'destination.topic must be a string',
    );
    expect(rule({ type: 'queue', topic: 't' }, 'destination')).toBe(
      'destination.broker must name a broker of DESTINATION_BROKERS',
    );
    expect(rule({ type: 'queue', broker: 'q', topic: 't', exchange: 'x' }, 'destination')).toBe(
      'destination.exchange is not a field of a queue destination',
    );
  });

  it('a registered broker type gets the broker rules: its broker, its client part, its headers', () => {
    const brokers = [
      { name: 'q', type: 'queue', url: 'queue://h', namespace: 'client' as const, prefix: 'meb.' },
    ];
    const at = (topic: string) =>
      brokerProblem(
        { type: 'queue', broker: 'q', topic } as never,
        brokers as never,
        'c1',
        registry,
      );
    expect(at('meb.c1.orders')).toBeNull();
    expect(at('other')?.field).toBe('destination.topic');
    expect(brokerHeaderProblem('queue', ['Queue-Key'], registry)?.field).toBe('headers.Queue-Key');
    expect(brokerHeaderProblem('queue', ['x-other'], registry)).toBeNull();
  });

  it('a registered type is in the API document: request and response schemas, and the create rule', () => {
    const request = destinationRequestSchema(registry);
    expect(request.oneOf.at(-1)).toEqual({
      type: 'object',
      title: 'queue',
      properties: {
        type: { type: 'string', enum: ['queue'] },
        broker: { type: 'string', minLength: 1 },
        topic: { type: 'string' },
      },
      required: ['type', 'broker', 'topic'],
      additionalProperties: false,
    });
    expect(request.description).toContain(
      '`{"type": "queue", "broker", "topic"}` appends them to a topic.',
    );
    expect(request.description).toContain('`destination.topic` must begin');
    const response = destinationResponseSchema(registry);
    expect(response.oneOf.at(-1)).toEqual({
      type: 'object',
      properties: {
        type: { type: 'string', enum: ['queue'] },
        broker: { type: 'string' },
        topic: { type: 'string' },
      },
      required: ['type', 'broker', 'topic'],
    });
    expect(response.description).toMatch(/ or `\{"type": "queue", "broker", "topic"\}`$/);
    expect(JSON.stringify(createBodyRule(registry).oneOf![1])).toContain(
      '"enum":["rabbitmq","nats","queue"]',
    );
  });
});
