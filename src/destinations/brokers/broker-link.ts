import { Logger } from '@nestjs/common';
import { BrokerConfig } from '../../config/config.types';
import type { BrokerState, BrokerStatus } from '../destination-provider';
import {
  publicReason,
  reconnectDelayMs,
  withoutAddress,
  withoutCredentials,
} from './broker-status';
import { Deadline, TransportResult, describeError, failed } from '../transport';

/**
 * Opens a connection. `dropped` is this connection's own: call it once the connection is gone
 * for good, and the link opens another after a growing wait.
 */
export type Dial<C> = (dropped: () => void) => Promise<C>;

/**
 * The connection bookkeeping a broker keeps whatever its client library: one connection at a
 * time, opened on demand or at the worker's start, opened again after it drops (with a growing
 * wait) until the broker closes, and how it stands for /health/ready. The log has its errors
 * without the URL's credentials; answers (readiness, the delivery log) name the broker and a
 * general reason, never where it is.
 */
export class BrokerLink<C> {
  readonly logger: Logger;
  private connection: Promise<C> | null = null;
  private state: BrokerState = 'not connected yet';
  private lastError: string | undefined;
  private failures = 0;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private closing = false;

  constructor(
    private readonly config: BrokerConfig,
    /** Its provider's label (RabbitMQ, NATS): how logs and failed attempts name its type. */
    private readonly label: string,
    private readonly dial: Dial<C>,
    /** What else goes with the connection (e.g. its channels). */
    private readonly onDropped: () => void = () => undefined,
  ) {
    this.logger = new Logger(`${label} broker ${config.name}`);
  }

  status(): BrokerStatus {
    return {
      type: this.config.type,
      state: this.state,
      ...(this.state !== 'connected' &&
        this.lastError && { error: publicReason(this.lastError) ?? 'unreachable' }),
    };
  }

  /** Opens the connection now rather than at the first attempt. */
  open(): void {
    this.connect().catch(() => undefined);
  }

  connect(): Promise<C> {
    if (this.connection) return this.connection;
    this.state = this.failures > 0 || this.state === 'reconnecting' ? 'reconnecting' : 'connecting';
    const connecting: Promise<C> = this.dial(() => this.dropped(connecting)).then(
      (connection) => {
        this.state = 'connected';
        this.failures = 0;
        this.lastError = undefined;
        this.logger.log('connected');
        return connection;
      },
      (error: unknown) => {
        const first = this.lastError === undefined;
        this.lastError = withoutCredentials(describeError(error), this.config.url);
        // Once per outage, not at every reconnection: the waits grow to 30 s, the log stays short.
        if (first) this.logger.warn(`cannot connect: ${this.lastError}`);
        this.dropped(connecting);
        throw new Error(this.lastError);
      },
    );
    this.connection = connecting;
    return connecting;
  }

  /**
   * The attempt's failure when no connection came before its deadline or at all: the broker by
   * its name and why in general terms, never its address (the log has that).
   */
  unreachable(error: unknown, deadline: Deadline): TransportResult {
    const broker = `${this.label} broker "${this.config.name}"`;
    if (deadline.passed) return failed(`timed out connecting to ${broker}`);
    const reason = publicReason(describeError(error));
    return failed(`${broker} unreachable${reason === null ? '' : ` (${reason})`}`);
  }

  /** A client that reconnects by itself lost its connection for now. */
  interrupted(why: string): void {
    this.state = 'reconnecting';
    this.logger.warn(`connection lost; ${why}`);
  }

  /** A client that reconnects by itself has its connection back. */
  resumed(): void {
    this.state = 'connected';
    this.lastError = undefined;
    this.logger.log('reconnected');
  }

  /** An error the connection reported without (yet) closing. */
  noteError(text: string): void {
    this.lastError = withoutCredentials(text, this.config.url);
  }

  /** A broker's answer as a client may read it in its delivery log. */
  hide(text: string): string {
    return withoutAddress(text, this.config.url);
  }

  /** Stops reconnecting and closes the connection, if one is open. */
  async close(shut: (connection: C) => Promise<unknown>): Promise<void> {
    this.closing = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const connection = await this.connection?.catch(() => null);
    if (connection) await shut(connection).catch(() => undefined);
  }

  /** The connection is gone: attempts fail (and retry) until it is back, tried on its own. */
  private dropped(which: Promise<C>): void {
    if (this.connection !== which) return;
    this.connection = null;
    this.onDropped();
    if (this.closing) return;
    if (this.state === 'connected') {
      this.logger.warn(`connection lost${this.lastError ? `: ${this.lastError}` : ''}`);
    }
    this.state = 'reconnecting';
    const delay = reconnectDelayMs(this.failures++);
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.connection && !this.closing) this.open();
    }, delay);
    this.reconnectTimer.unref();
  }
}
