import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryColumn,
  UpdateDateColumn,
} from 'typeorm';
import { EventKind } from '../webhooks/subscription-events';
import { WebhookEntity } from '../webhooks/webhook.entity';

export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DELIVERY_REQUEUES = ['redeliver', 'replay', 'missed'] as const;
export type DeliveryRequeue = (typeof DELIVERY_REQUEUES)[number];

@Check('deliveries_status_check', `status IN ('pending', 'succeeded', 'failed')`)
@Index('deliveries_webhook_page_idx', { synchronize: false })
@Index('deliveries_due_idx', { synchronize: false })
@Index('deliveries_event_webhook_idx', { synchronize: false })
@Index('deliveries_created_idx', { synchronize: false })
@Index('deliveries_order_idx', { synchronize: false })
@Check('deliveries_requeued_by_check', `requeued_by IN ('redeliver', 'replay', 'missed')`)
@Entity('deliveries')
export class DeliveryEntity {
  // Time-ordered: see src/database/row-id.ts.
  @PrimaryColumn({ type: 'uuid', default: () => 'uuid_v7()' })
  id: string;

  @Column({ name: 'webhook_id', type: 'uuid' })
  webhookId: string;

  // Declared so the schema (and migration:generate) knows the foreign keys; never loaded.
  @ManyToOne(() => WebhookEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'webhook_id', foreignKeyConstraintName: 'deliveries_webhook_id_fkey' })
  webhook?: WebhookEntity;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId: string;

  @Column({ type: 'text' })
  event: EventKind;

  /**
   * The exact bytes every attempt sends, for deliveries stored before the body moved to the
   * event (events.body); null otherwise.
   */
  @Column({ type: 'text', nullable: true })
  body: string | null;

  /**
   * The bytes it was shaped into and first sent (a template's output, a chat tool's built-in
   * message: docs/templates.md), which its later attempts and redeliveries send; null until
   * then, when it is sent as its event's body, and after a replay, which shapes again.
   */
  @Column({ name: 'sent_body', type: 'text', nullable: true, select: false })
  sentBody?: string | null;

  @Column({ type: 'text', default: 'pending' })
  status: DeliveryStatus;

  @Column({ name: 'attempt_count', type: 'integer', default: 0 })
  attemptCount: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null;

  @Column({ name: 'last_status_code', type: 'integer', nullable: true })
  lastStatusCode: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  /** attempt_count when the current series began: a redelivery or replay starts a new one. */
  @Column({ name: 'series_start', type: 'integer', default: 0 })
  seriesStart: number;

  /** What last re-queued it (docs/api.md#receiver-health), or, for `missed`, created it in a replay. */
  @Column({ name: 'requeued_by', type: 'text', nullable: true })
  requeuedBy: DeliveryRequeue | null;

  @Column({ name: 'requeued_at', type: 'timestamptz', nullable: true })
  requeuedAt: Date | null;

  // The partition key (docs/operations.md#partitions), so part of the primary key; no foreign
  // key to events, whose key would have to hold the event's partition key too.
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3, primary: true })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  /** Until when a worker holds the delivery (claimed, attempt under way); see DeliveryStore. */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true, select: false })
  leaseUntil?: Date | null;

  /**
   * The event's order_key and order_ts, copied only when its webhook had `ordering: "meeting"`
   * as it was created: its ordering key then (docs/receiving.md#ordered-delivery-per-meeting), null for every other delivery.
   */
  @Column({ name: 'order_key', type: 'text', nullable: true, select: false })
  orderKey?: string | null;

  @Column({ name: 'order_ts', type: 'bigint', nullable: true, select: false })
  orderTs?: string | null;

  /** W3C traceparent its attempts' spans continue (docs/operations.md); null while tracing was off. */
  @Column({ name: 'trace_context', type: 'text', nullable: true, select: false })
  traceContext?: string | null;
}
