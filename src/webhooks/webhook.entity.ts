import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { revivePrecise } from '../common/precise-json';
import type { CustomHeaders } from './custom-headers';
import type { Destination } from '../destinations/registry';
import { Subscription } from './subscription-events';

export const WEBHOOK_DISABLED_REASONS = ['gone', 'failing'] as const;
export type WebhookDisabledReason = (typeof WEBHOOK_DISABLED_REASONS)[number];

/** `none`: each delivery goes as soon as it can; `meeting`: one meeting's in order (docs/receiving.md#ordered-delivery-per-meeting). */
export const WEBHOOK_ORDERINGS = ['none', 'meeting'] as const;
export type WebhookOrdering = (typeof WEBHOOK_ORDERINGS)[number];

// Indexes the migration creates in forms TypeORM cannot describe (GIN, partial, DESC);
// synchronize: false keeps migration:generate from proposing to drop them.
@Index('webhooks_active_events_idx', { synchronize: false })
@Index('webhooks_owner_page_idx', { synchronize: false })
@Index('webhooks_active_owner_events_idx', { synchronize: false })
@Check(
  'webhooks_previous_secret_ck',
  '(previous_secret_encrypted IS NULL) = (previous_secret_expires_at IS NULL)',
)
@Check('webhooks_max_in_flight_ck', 'max_in_flight BETWEEN 1 AND 100')
@Check('webhooks_rate_limit_ck', 'rate_limit BETWEEN 1 AND 10000')
@Check('webhooks_ordering_ck', `ordering IN ('none', 'meeting')`)
@Check('webhooks_disabled_reason_check', `disabled_reason IN ('gone', 'failing')`)
@Check(
  'webhooks_destination_url_ck',
  `(destination->>'type' IN ('http', 'slack', 'teams', 'discord')) = (url IS NOT NULL)`,
)
@Check(
  'webhooks_url_encrypted_ck',
  `(url_encrypted IS NOT NULL) = (destination->>'type' IN ('slack', 'teams', 'discord'))`,
)
@Check(
  'webhooks_filter_ck',
  '(filter IS NULL) = (filter_path IS NULL) AND (filter IS NULL) = (filter_vars IS NULL)',
)
@Check('webhooks_headers_ck', '(headers_encrypted IS NULL) = (headers_masked IS NULL)')
@Entity('webhooks')
export class WebhookEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'owner_client_id', type: 'text' })
  ownerClientId: string;

  /**
   * The receiver of an http destination; a chat destination's address masked (its host and last
   * four characters); null for a broker destination (docs/destinations.md).
   */
  @Column({ type: 'text', nullable: true })
  url: string | null;

  /** A chat destination's address, sealed (AES-256-GCM, purpose webhook-url); null otherwise. */
  @Column({ name: 'url_encrypted', type: 'text', nullable: true })
  urlEncrypted: string | null;

  /** The JSONata expression that shapes what it is sent (docs/templates.md); null: none. */
  @Column({ type: 'text', nullable: true })
  template: string | null;

  // As PostgreSQL shows the migration's default, so that migration:generate finds no change.
  @Column({ type: 'jsonb', default: () => `'{"type": "http"}'` })
  destination: Destination;

  /**
   * The filter as the client sent it (docs/destinations.md); null: every event of its kinds. Its numbers
   * that a JavaScript number would change are stored as marked strings (PreciseNumber.toJSON)
   * and read back as PreciseNumbers, so answers show them digit for digit; what the fan-out
   * matches is filter_path, which holds them as numbers.
   */
  @Column({
    type: 'jsonb',
    nullable: true,
    transformer: { to: (v: unknown) => v, from: revivePrecise },
  })
  filter: Record<string, unknown> | null;

  /** The filter compiled (event-filter.ts): what the fan-out statements match. */
  @Column({ name: 'filter_path', type: 'jsonpath', nullable: true })
  filterPath: string | null;

  @Column({ name: 'filter_vars', type: 'jsonb', nullable: true })
  filterVars: Record<string, unknown> | null;

  /** The custom headers as one AES-256-GCM ciphertext of their JSON; null when none. */
  @Column({ name: 'headers_encrypted', type: 'text', nullable: true })
  headersEncrypted: string | null;

  /** The same headers masked (custom-headers.ts), for answers and logs. */
  @Column({ name: 'headers_masked', type: 'jsonb', nullable: true })
  headersMasked: CustomHeaders | null;

  @Column({ type: 'text', array: true })
  events: Subscription[];

  /** AES-256-GCM ciphertext (see SecretCipherService); never leaves the service. */
  @Column({ name: 'secret_encrypted', type: 'text' })
  secretEncrypted: string;

  @Column({ name: 'secret_hint', type: 'text' })
  secretHint: string;

  /**
   * The secret a PATCH replaced (ciphertext, like the current one): it signs beside the new one
   * until previousSecretExpiresAt (docs/receiving.md). Both null when there is none.
   */
  @Column({ name: 'previous_secret_encrypted', type: 'text', nullable: true })
  previousSecretEncrypted: string | null;

  @Column({ name: 'previous_secret_expires_at', type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  /** Why the service disabled it (docs/api.md#receiver-health); null while enabled or switched off by its owner. */
  @Column({ name: 'disabled_reason', type: 'text', nullable: true })
  disabledReason: WebhookDisabledReason | null;

  @Column({ name: 'disabled_at', type: 'timestamptz', nullable: true })
  disabledAt: Date | null;

  /** Most attempts in flight to it across all workers; null: DELIVERY_CONCURRENCY_PER_WEBHOOK. */
  @Column({ name: 'max_in_flight', type: 'integer', nullable: true })
  maxInFlight: number | null;

  /** Most attempts started to it in any second across all workers; null: no rate limit. */
  @Column({ name: 'rate_limit', type: 'integer', nullable: true })
  rateLimit: number | null;

  /** `meeting`: the deliveries of one meeting are sent one at a time, in order (docs/receiving.md#ordered-delivery-per-meeting). */
  @Column({ type: 'text', default: 'none' })
  ordering: WebhookOrdering;

  /** Deliveries (tests aside) that ended failed since the last one that succeeded. */
  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz', precision: 3 })
  updatedAt: Date;
}
