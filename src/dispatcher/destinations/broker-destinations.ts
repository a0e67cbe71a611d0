import { Inject, Injectable, OnApplicationShutdown } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import type { Destination } from '../../webhooks/destination';
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
  private readonly rabbitmq = new Map<string, RabbitMqBroker>();
  private readonly nats = new Map<string, NatsBroker>();
  private readonly timeoutMs: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.timeoutMs = config.delivery.timeoutMs;
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
    _target: unknown,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    if (destination.type === 'rabbitmq') {
      const broker = this.rabbitmq.get(destination.broker);
      if (!broker) return Promise.resolve(missing(destination));
      return broker.publish(destination.exchange, destination.routing_key, message, deadline);
    }
    const broker = this.nats.get(destination.broker);
    if (!broker) return Promise.resolve(missing(destination));
    return broker.publish(destination.subject, message, deadline);
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      [...this.rabbitmq.values(), ...this.nats.values()].map((broker) => broker.close()),
    );
  }
}

/** A broker removed from DESTINATION_BROKERS after the webhook named it. */
const missing = (destination: BrokerDestination): TransportResult =>
  failed(
    `broker "${destination.broker}" is not a ${destination.type} broker of DESTINATION_BROKERS ` +
      '(removed from the configuration?)',
  );
