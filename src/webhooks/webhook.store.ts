import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { QueryDeepPartialEntity, Repository } from 'typeorm';
import { Cursor, keysetPage } from '../common/cursor';
import { WebhookEntity } from './webhook.entity';

/** What a new subscription is stored with; id and timestamps come from the database. */
export type NewWebhook = Pick<
  WebhookEntity,
  | 'ownerClientId'
  | 'url'
  | 'events'
  | 'secretEncrypted'
  | 'secretHint'
  | 'active'
  | 'maxInFlight'
  | 'rateLimit'
  | 'ordering'
> &
  Partial<Pick<WebhookEntity, DestinationFields>>;

/** The columns of docs/destinations.md's fields, written together by create and PATCH. */
export type DestinationFields =
  | 'destination'
  | 'filter'
  | 'filterPath'
  | 'filterVars'
  | 'headersEncrypted'
  | 'headersMasked'
  | 'urlEncrypted'
  | 'template';

/** A new secret, sealed; the one it replaces keeps signing until `previousUntil` (docs/receiving.md). */
export interface SecretReplacement {
  secretEncrypted: string;
  secretHint: string;
  /** Null: the replaced secret stops signing at once. */
  previousUntil: Date | null;
}

export type WebhookChanges = Partial<
  Pick<
    WebhookEntity,
    | 'url'
    | 'events'
    | 'active'
    | 'disabledReason'
    | 'disabledAt'
    | 'consecutiveFailures'
    | DestinationFields
    | 'maxInFlight'
    | 'rateLimit'
    | 'ordering'
  >
> & {
  secret?: SecretReplacement;
};

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

  /**
   * Applies `changes` in one statement that also checks ownership; false when none matched. A
   * new secret makes the secret the row holds then the previous one, so of two changes at once
   * each keeps the secret it replaced.
   */
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
    const { secret, ...fields } = changes;
    // jsonb columns take plain objects; TypeORM's deep-partial type does not know that.
    const values = { ...fields } as QueryDeepPartialEntity<WebhookEntity>;
    if (secret) {
      values.secretEncrypted = secret.secretEncrypted;
      values.secretHint = secret.secretHint;
      // The right-hand side of SET reads the row as it was before this statement.
      values.previousSecretEncrypted = secret.previousUntil ? () => 'secret_encrypted' : null;
      values.previousSecretExpiresAt = secret.previousUntil;
    }
    const result = await this.webhooks.update({ id, ownerClientId }, values);
    return Boolean(result.affected);
  }

  async remove(ownerClientId: string, id: string): Promise<boolean> {
    const result = await this.webhooks.delete({ id, ownerClientId });
    return Boolean(result.affected);
  }
}
