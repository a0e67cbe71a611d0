import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { DestinationProvider } from './destination-provider';
import { DESTINATIONS, DestinationRegistry } from './registry';

/** `{"type": "nats", "broker", "subject"}`: a type's shape as the descriptions show it. */
const shapeOf = (p: DestinationProvider): string =>
  `\`{${[`"type": "${p.type}"`, ...Object.keys(p.properties).map((k) => `"${k}"`)].join(', ')}}\``;

/** "a, b or c" */
const listed = (items: string[]): string =>
  items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`;

const typeProperty = (p: DestinationProvider): SchemaObject => ({ type: 'string', enum: [p.type] });

/** `destination` in a create or update body: one schema per registered type. */
export function destinationRequestSchema(registry: DestinationRegistry = DESTINATIONS): {
  description: string;
  oneOf: SchemaObject[];
  example: object;
} {
  const brokers = registry.providers.filter((p) => p.broker !== undefined);
  const places = brokers.map((p) => `\`destination.${p.broker!.place.field}\``);
  const types = registry.providers.map(
    (p, i) => `${shapeOf(p)}${i === 0 ? ' (the default)' : ''} ${p.summary}.`,
  );
  const brokerRules =
    brokers.length === 0
      ? []
      : [
          "A broker destination names, by `broker`, a broker the service's operator configured " +
            '(DESTINATION_BROKERS), and has no `url`. An unknown broker, or one of another type, ' +
            'is refused (400 naming `destination.broker`). Unless the operator shares a broker ' +
            `whole, each client has its own part of it: ${listed(places)} must begin ` +
            '`<prefix><client_id>.` (`meb.<client_id>.` by default; else 400 naming it). A ' +
            'refused header is a 400 naming `headers.<name>`.',
        ];
  return {
    description: ['Where deliveries go.', ...types, ...brokerRules].join(' '),
    oneOf: registry.providers.map((p) => ({
      type: 'object',
      title: p.type,
      properties: { type: typeProperty(p), ...p.properties },
      required: ['type', ...p.required],
      additionalProperties: false,
    })),
    example: registry.defaultDestination,
  };
}

/** `destination` in an answer: the same types, each field with its type only. */
export function destinationResponseSchema(registry: DestinationRegistry = DESTINATIONS): {
  description: string;
  oneOf: SchemaObject[];
  example: object;
} {
  const shapes = registry.providers.map((p) => `${shapeOf(p)}${p.broker ? '' : ' (to `url`)'}`);
  return {
    description: `Where deliveries go: ${listed(shapes)}`,
    oneOf: registry.providers.map((p) => ({
      type: 'object',
      properties: {
        type: typeProperty(p),
        ...Object.fromEntries(
          Object.entries(p.properties).map(([name, s]) => [name, { type: s.type }]),
        ),
      },
      required: ['type', ...p.required],
    })),
    example: registry.defaultDestination,
  };
}

/**
 * Which of `url` and `destination` a create body needs, as the document's own rule: `url` with
 * a type that is not a broker (the default), none with a broker one.
 */
export function createBodyRule(registry: DestinationRegistry = DESTINATIONS): SchemaObject {
  const destinationOf = (types: string[]) => ({
    properties: { destination: { properties: { type: { enum: types } } } },
  });
  const brokers = registry.brokerTypes;
  const others = registry.types.filter((t) => !brokers.includes(t));
  return {
    oneOf: [
      { required: ['url'], ...destinationOf(others) },
      { required: ['destination'], not: { required: ['url'] }, ...destinationOf(brokers) },
    ],
  };
}
