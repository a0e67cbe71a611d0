import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import type { BrokerConfig } from '../config/config.types';
import type { Deadline, OutgoingMessage, TransportResult } from './transport';
import type { ChatTool } from './chat/chat-tool';

/** How a broker's connection stands, as /health/ready shows it (never a reason to fail it). */
export type BrokerState = 'not connected yet' | 'connecting' | 'connected' | 'reconnecting';

export interface BrokerStatus {
  /** A registered broker type. */
  type: string;
  state: BrokerState;
  /**
   * Why it is not connected, in general terms (`connection refused`): the answer is
   * unauthenticated, so it never holds the broker's address; the log has the details.
   */
  error?: string;
}

/** What every destination object has: the type that picks its provider. */
export interface DestinationBase {
  type: string;
}

/** Where an attempt goes besides its destination object. */
export interface SendTarget {
  /** The webhook's URL: an http destination's receiver; null for a broker. */
  url: string | null;
  /** The webhook's client: a broker destination must lie in its part of the broker. */
  ownerClientId: string;
}

/** What a process's senders are made from: the settings of docs/configuration.md they use. */
export interface SenderSettings {
  /** DELIVERY_TIMEOUT_MS: also how long a broker's connection may take to open. */
  timeoutMs: number;
  /** DELIVERY_CONCURRENCY: connections an HTTP pool may keep. */
  concurrency: number;
  webhookAllowPrivateUrls: boolean;
}

/**
 * What sends a destination type's attempts: one per process, or one per broker of
 * DESTINATION_BROKERS. `send` never throws (every outcome is a result to record) and gives up
 * when `deadline` passes.
 */
export interface DestinationSender<D extends DestinationBase = DestinationBase> {
  /** Connects now (a worker's start) rather than at the first attempt. */
  open(): void;
  send(
    destination: D,
    target: SendTarget,
    message: OutgoingMessage,
    deadline: Deadline,
  ): Promise<TransportResult>;
  /** Its entry in /health/ready's `brokers`; none for a type without a connection to show. */
  status?(): BrokerStatus;
  close(): Promise<void>;
}

/** What a broker type adds: it is configured in DESTINATION_BROKERS and clients name one. */
export interface BrokerTraits<D extends DestinationBase> {
  /** The URL schemes its DESTINATION_BROKERS entries may have (with the colon). */
  schemes: readonly string[];
  /**
   * The field that says where in the broker a message goes, which a client's part of the broker
   * (`namespace: "client"`) must hold, and what else to say when it does not.
   */
  place: { field: string; note?: string };
  /**
   * Why a custom header (its name in lower case) would change where or how the broker sends
   * the message rather than travel with it; null when it is only carried.
   */
  actedOnHeader(lowerName: string): string | null;
  /** Its connection to one broker, made when a worker starts. */
  connect(broker: BrokerConfig, settings: SenderSettings): Promise<DestinationSender<D>>;
}

/**
 * One destination type (docs/destinations.md#adding-a-destination-type): everything the service
 * knows of it. Registered once in registry.ts; validation, the API document, DESTINATION_BROKERS,
 * the metrics and /health/ready ask the registry. A provider file imports no client library at
 * its top: the config loader and the CLI read the registry, and only a worker sends.
 */
export interface DestinationProvider<D extends DestinationBase = DestinationBase> {
  type: D['type'];
  /** How logs, failed attempts and /health/ready name it (`RabbitMQ`). */
  label: string;
  /**
   * Its fields but `type`, as the API document shows them in a request; a response shows the
   * same names with their types only.
   */
  properties: Record<string, SchemaObject>;
  /** The fields a request must give, but `type`. */
  required: readonly string[];
  /** What a destination of this type does, for the API document (after its shape). */
  summary: string;
  /**
   * Its own rules, once `type` is known and no unknown field is present: the problem naming
   * `${field}.<name>`, or null. Which brokers exist is the service's to check.
   */
  check(destination: Record<string, unknown>, field: string): string | null;
  /**
   * Present for a chat tool: its `url` is the tool's incoming webhook (a credential, stored
   * encrypted and shown masked), and a delivery without a template sends its built-in message.
   */
  chat?: ChatTool;
  /** Present for a message broker: its destinations name one and have no `url`. */
  broker?: BrokerTraits<D>;
  /** A type without a broker: the one sender of a process. */
  sender?(settings: SenderSettings): Promise<DestinationSender<D>>;
}
