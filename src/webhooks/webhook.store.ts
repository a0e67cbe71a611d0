import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Cursor, keysetPage } from '../common/cursor';
import { WebhookEntity } from './webhook.entity';

/** What a new subscription is stored with; id and timestamps come from the database. */
export type NewWebhook = Pick<
  WebhookEntity,
  'ownerClientId' | 'url' | 'events' | 'secretEncrypted' | 'secretHint' | 'active'
>;

export type WebhookChanges = Partial<
  Pick<
    WebhookEntity,
    | 'url'
    | 'events'
    | 'secretEncrypted'
    | 'secretHint'
    | 'active'
    | 'disabledReason'
    | 'disabledAt'
    | 'consecutiveFailures'
  >
>;

/**
 * The webhooks table, every read and write scoped to the owning client (the injection token;
 * PgWebhookStore is the real one).
 */
export abstract class WebhookStore {
  /** Stores the webhook unless its owner holds `limit` already; null then (nothing written). */
  abstract create(webhook: NewWebhook, limit: number): Promise<WebhookEntity | null>;

  /** Newest first by (created_at, id), after `cursor`: `limit + 1` rows, as toPage expects. */
  abstract page(
    ownerClientId: string,
    cursor: Cursor | null,
    limit: number,
  ): Promise<WebhookEntity[]>;

  abstract findOwned(ownerClientId: string, id: string): Promise<WebhookEntity | null>;

  /** Applies `changes` in one statement that also checks ownership; false when none matched. */
  abstract update(ownerClientId: string, id: string, changes: WebhookChanges): Promise<boolean>;

  /** False when no webhook `id` belongs to the client. */
  abstract remove(ownerClientId: string, id: string): Promise<boolean>;
}

@Injectable()
export class PgWebhookStore extends WebhookStore {
  constructor(
    @InjectRepository(WebhookEntity) private readonly webhooks: Repository<WebhookEntity>,
  ) {
    super();
  }

  create(webhook: NewWebhook, limit: number): Promise<WebhookEntity | null> {
    return this.webhooks.manager.transaction(async (tx) => {
      // Concurrent creates of one owner take turns, so none slips past the count.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('webhooks-of:' || $1))`, [
        webhook.ownerClientId,
      ]);
      const held = await tx.countBy(WebhookEntity, { ownerClientId: webhook.ownerClientId });
      if (held >= limit) return null;
      return tx.save(tx.create(WebhookEntity, webhook));
    });
  }

  page(ownerClientId: string, cursor: Cursor | null, limit: number): Promise<WebhookEntity[]> {
    const owned = this.webhooks
      .createQueryBuilder('w')
      .where('w.owner_client_id = :ownerClientId', { ownerClientId });
    return keysetPage(owned, 'w', cursor, limit).getMany();
  }

  findOwned(ownerClientId: string, id: string): Promise<WebhookEntity | null> {
    return this.webhooks.findOneBy({ id, ownerClientId });
  }

  async update(ownerClientId: string, id: string, changes: WebhookChanges): Promise<boolean> {
    const result = await this.webhooks.update({ id, ownerClientId }, changes);
    return Boolean(result.affected);
  }

  async remove(ownerClientId: string, id: string): Promise<boolean> {
    const result = await this.webhooks.delete({ id, ownerClientId });
    return Boolean(result.affected);
  }
}
