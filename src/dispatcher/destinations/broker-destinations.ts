import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig, BrokerConfig } from '../../config/config.types';
import { brokerHeaderProblem } from '../../webhooks/broker-headers';
import { Destination, brokerProblem, destinationRule } from '../../webhooks/destination';
import { BrokerStatus } from './broker-status';
import { NatsBroker } from './nats.destination';
import { RabbitMqBroker } from './rabbitmq.destination';
import {
  Deadline,
  DestinationTransport,
  OutgoingMessage,
  TransportResult,
  failed,
} from './transport';

type BrokerDestination = Exclude<Destination, { type: 'http' }>;

/**
 * The brokers of DESTINATION_BROKERS, one long-lived connection each, and the transport of
 * both broker destination types. Connections open when a worker starts (open()) and reopen on
 * their own; a process that never sends (role api) opens none.
 */
@Injectable()
export class BrokerDestinations
  implements DestinationTransport<BrokerDestination>, OnApplicationShutdown
{
  private readonly logger = new Logger(BrokerDestinations.name);
  private readonly rabbitmq = new Map<string, RabbitMqBroker>();
  private readonly nats = new Map<string, NatsBroker>();
  private readonly timeoutMs: number;
  private readonly configs: BrokerConfig[];

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.timeoutMs = config.delivery.timeoutMs;
    this.configs = config.destinationBrokers;
    for (const broker of config.destinationBrokers) {
      if (broker.type === 'rabbitmq') {
        this.rabbitmq.set(broker.name, new RabbitMqBroker(broker, this.timeoutMs));
      } else {
        this.nats.set(broker.name, new NatsBroker(broker, this.timeoutMs));
      }
    }
  }

  open(): void {
    for (const broker of [...this.rabbitmq.values(), ...this.nats.values()]) broker.link.open();
  }

  /** Each broker's connection, by name: for /health/ready, which never fails over them. */
  statuses(): Record<string, BrokerStatus> {
    return Object.fromEntries([
      ...[...this.rabbitmq].map(([name, b]) => [name, b.link.status()] as const),
      ...[...this.nats].map(([name, b]) => [name, b.link.status()] as const),
    ]);
  }

  send(
    destination: BrokerDestination,
    target: { ownerClientId: string },
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    const refused = this.refusal(destination, target.ownerClientId, message);
    if (refused !== null) {
      this.logger.warn(
        `delivery ${message.deliveryId} of client ${target.ownerClientId} not published: ${refused}`,
      );
      return Promise.resolve(failed(`not published: ${refused}`));
    }
    if (destination.type === 'rabbitmq') {
      return this.rabbitmq
        .get(destination.broker)!
        .publish(
          target.ownerClientId,
          destination.exchange,
          destination.routing_key,
          message,
          deadline,
        );
    }
    return this.nats.get(destination.broker)!.publish(destination.subject, message, deadline);
  }

  /**
   * The rules of create and PATCH, again at every attempt: a row written before a rule, or a
   * broker since removed or shared differently, must not publish where its client may not
   * (docs/destinations.md#clients-sharing-a-broker). Null when it may go.
   */
  private refusal(
    destination: BrokerDestination,
    clientId: string,
    message: OutgoingMessage,
  ): string | null {
    return (
      destinationRule(destination, 'destination') ??
      brokerProblem(destination, this.configs, clientId)?.message ??
      brokerHeaderProblem(destination.type, Object.keys(message.headers))?.message ??
      null
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      [...this.rabbitmq.values(), ...this.nats.values()].map((broker) => broker.close()),
    );
  }
}
