import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config/config.module';
import { AppConfig } from '../config/config.types';

/**
 * Attempts in flight per webhook in this process (SPEC §9 fairness): at most
 * DELIVERY_CONCURRENCY_PER_WEBHOOK to one webhook, so a slow receiver holds only its share of
 * the worker's DELIVERY_CONCURRENCY slots and the rest serve other webhooks.
 */
@Injectable()
export class WebhookSlots {
  private readonly inFlight = new Map<string, number>();
  private readonly limit: number;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.limit = config.delivery.concurrencyPerWebhook;
  }

  /** Takes a slot of `webhookId`; returns its release, or null when all its slots are taken. */
  tryAcquire(webhookId: string): (() => void) | null {
    const taken = this.inFlight.get(webhookId) ?? 0;
    if (taken >= this.limit) return null;
    this.inFlight.set(webhookId, taken + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.inFlight.get(webhookId) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(webhookId);
      else this.inFlight.set(webhookId, left);
    };
  }
}
