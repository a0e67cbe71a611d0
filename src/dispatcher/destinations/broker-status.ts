import { BrokerType } from '../../config/config.types';

/** How a broker's connection stands, as /health/ready shows it (never a reason to fail it). */
export type BrokerState = 'not connected yet' | 'connecting' | 'connected' | 'reconnecting';

export interface BrokerStatus {
  type: BrokerType;
  state: BrokerState;
  /** The last connection error, when not connected; it never holds the broker's URL. */
  error?: string;
}

/** How logs and failed attempts name a broker type. */
export const brokerLabel: Record<BrokerType, string> = { rabbitmq: 'RabbitMQ', nats: 'NATS' };

/** A broker URL's credentials must never reach a log or an answer. */
export function withoutCredentials(text: string, url: string): string {
  let out = text.split(url).join('<broker url>');
  try {
    const parsed = new URL(url);
    if (parsed.password) out = out.split(decodeURIComponent(parsed.password)).join('****');
  } catch {
    // Validated by the config module; nothing to hide otherwise.
  }
  return out;
}

/** Waits that grow from 500 ms to 30 s between reconnections. */
export const reconnectDelayMs = (failures: number): number =>
  Math.min(30_000, 500 * 2 ** Math.min(failures, 6));
