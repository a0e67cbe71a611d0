import type { BrokerTraits, DestinationBase, DestinationProvider } from './destination-provider';
import { httpDestination } from './http/http.destination';
import { natsDestination } from './nats/nats.destination';
import { rabbitMqDestination } from './rabbitmq/rabbitmq.destination';
import { slackDestination } from './slack/slack.destination';
import { teamsDestination } from './teams/teams.destination';
import { discordDestination } from './discord/discord.destination';
import type { ChatTool } from './chat/chat-tool';

/**
 * The destination types, one registration line each (docs/destinations.md#adding-a-destination-type).
 * The first is the default of a webhook that names none.
 */
export const DESTINATION_PROVIDERS = [
  httpDestination,
  rabbitMqDestination,
  natsDestination,
  slackDestination,
  teamsDestination,
  discordDestination,
] as const;

type Registered = (typeof DESTINATION_PROVIDERS)[number];
type ObjectOf<P> = P extends DestinationProvider<infer D> ? D : never;

/** Where a webhook's deliveries go (docs/destinations.md), as the API shows it and the table stores it. */
export type Destination = ObjectOf<Registered>;
export type DestinationType = Destination['type'];
/** The types configured in DESTINATION_BROKERS. */
export type BrokerType = Exclude<
  ObjectOf<Registered>,
  { type: 'http' | 'slack' | 'teams' | 'discord' }
>['type'];

/** The registered providers by type; plain data, read before any Nest module exists. */
export class DestinationRegistry {
  private readonly byType: Map<string, DestinationProvider>;

  constructor(readonly providers: readonly DestinationProvider[]) {
    this.byType = new Map(providers.map((p) => [p.type, p]));
  }

  get types(): string[] {
    return this.providers.map((p) => p.type);
  }

  /** The types whose destinations name a broker of DESTINATION_BROKERS. */
  get brokerTypes(): string[] {
    return this.providers.filter((p) => p.broker !== undefined).map((p) => p.type);
  }

  /** The default destination of a webhook: the first type, with no fields. */
  get defaultDestination(): DestinationBase {
    return { type: this.providers[0].type };
  }

  /** The types that post to a chat tool (docs/destinations.md#chat-tools). */
  get chatTypes(): string[] {
    return this.providers.filter((p) => p.chat !== undefined).map((p) => p.type);
  }

  /** The chat tool of `type`; undefined for a type that is not a chat one. */
  chat(type: string): ChatTool | undefined {
    return this.byType.get(type)?.chat;
  }

  get(type: string): DestinationProvider | undefined {
    return this.byType.get(type);
  }

  /** The broker traits of `type`; undefined for a type that is not a broker. */
  broker(type: string): BrokerTraits<DestinationBase> | undefined {
    return this.byType.get(type)?.broker;
  }
}

export const DESTINATIONS = new DestinationRegistry(
  DESTINATION_PROVIDERS as readonly DestinationProvider[],
);

export const HTTP_DESTINATION: Destination = { type: 'http' };
