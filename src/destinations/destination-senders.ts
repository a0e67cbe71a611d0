import { Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig, BrokerConfig } from '../config/config.types';
import type { BrokerStatus } from './destination-provider';
import type { DestinationBase, DestinationSender, SendTarget } from './destination-provider';
import { brokerHeaderProblem, brokerProblem, destinationRule } from './destination-rules';
import { DESTINATIONS } from './registry';
import { Deadline, OutgoingMessage, TransportResult, failed } from './transport';

/**
 * The senders of the registered destination types (docs/destinations.md): one per type
 * without a broker, one per broker of DESTINATION_BROKERS, made as the app starts. Brokers
 * connect when a worker starts (open()) and reconnect on their own; a process that never
 * sends (role api) opens none, but shows them in /health/ready.
 */
@Injectable()
export class DestinationSenders implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(DestinationSenders.name);
  /** By type, for the types without a broker. */
  private readonly byType = new Map<string, DestinationSender>();
  /** By broker name. */
  private readonly byBroker = new Map<string, DestinationSender>();

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async onModuleInit(): Promise<void> {
    const settings = {
      timeoutMs: this.config.delivery.timeoutMs,
      concurrency: this.config.delivery.concurrency,
      webhookAllowPrivateUrls: this.config.webhookAllowPrivateUrls,
    };
    for (const provider of DESTINATIONS.providers) {
      if (provider.sender) this.byType.set(provider.type, await provider.sender(settings));
    }
    for (const broker of this.config.destinationBrokers) {
      // The config loader accepts only the registered broker types.
      const traits = DESTINATIONS.broker(broker.type)!;
      this.byBroker.set(broker.name, await traits.connect(broker, settings));
    }
  }

  /** Connects the brokers now rather than at their first attempt. */
  open(): void {
    for (const sender of [...this.byType.values(), ...this.byBroker.values()]) sender.open();
  }

  /** Each broker's connection, by name: for /health/ready, which never fails over them. */
  statuses(): Record<string, BrokerStatus> {
    return Object.fromEntries(
      [...this.byBroker].flatMap(([name, sender]) =>
        sender.status ? [[name, sender.status()] as const] : [],
      ),
    );
  }

  send(
    destination: DestinationBase,
    target: SendTarget,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult> {
    // Only the types without a broker have a sender by type.
    const sender = this.byType.get(destination.type);
    if (sender) return sender.send(destination, target, message, deadline);
    const refused = this.refusal(destination, target.ownerClientId, message);
    if (refused !== null) {
      this.logger.warn(
        `delivery ${message.deliveryId} of client ${target.ownerClientId} not published: ${refused}`,
      );
      return Promise.resolve(failed(`not published: ${refused}`));
    }
    const named = (destination as { broker?: string }).broker!;
    return this.byBroker.get(named)!.send(destination, target, message, deadline);
  }

  /**
   * The rules of create and PATCH, again at every attempt: a row written before a rule, or a
   * broker since removed or shared differently, must not publish where its client may not
   * (docs/destinations.md#clients-sharing-a-broker). Null when it may go.
   */
  private refusal(
    destination: DestinationBase,
    clientId: string,
    message: OutgoingMessage,
  ): string | null {
    const brokers: BrokerConfig[] = this.config.destinationBrokers;
    return (
      destinationRule(destination, 'destination') ??
      brokerProblem(destination, brokers, clientId)?.message ??
      brokerHeaderProblem(destination.type, Object.keys(message.headers))?.message ??
      null
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.all(
      [...this.byType.values(), ...this.byBroker.values()].map((sender) => sender.close()),
    );
  }
}
