import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import { EventKind } from '../webhooks/subscription-events';

/** A subscription event (job.started, …) as published, before fan-out. */
// Partitioned by created_at (docs/operations.md#partitions): a unique key would have to hold it,
// so the idempotency keys' uniqueness lives in event_keys; this index finds an event by its key.
@Index('events_idempotency_key_idx', { synchronize: false })
// Made by a migration; the retention job reads it.
@Index('events_created_idx', { synchronize: false })
// Made by a migration: the event lookup by tracking id (GET /api/events).
@Index('events_tracking_id_idx', { synchronize: false })
@Entity('events')
export class EventEntity {
  // Time-ordered: see src/database/row-id.ts.
  @PrimaryColumn({ type: 'uuid', default: () => 'uuid_v7()' })
  id: string;

  @Column({ type: 'text' })
  kind: EventKind;

  @Column({ type: 'jsonb' })
  data: Record<string, unknown>;

  @Column({ type: 'jsonb', nullable: true })
  source: Record<string, unknown> | null;

  /** Publishing twice with one key yields one event: retried producers stay idempotent. */
  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  // The partition key, so part of the primary key.
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3, primary: true })
  createdAt: Date;

  /**
   * The exact bytes every delivery of the event sends (docs/api.md#notifications), fixed when it is published;
   * null for events stored before it moved here (their deliveries hold it).
   */
  @Column({ type: 'text', nullable: true })
  body: string | null;

  /** The platform object's uuid (`payload.object.uuid`): what ordered deliveries key on. */
  @Column({ name: 'order_key', type: 'text', nullable: true, select: false })
  orderKey?: string | null;

  /** The platform's event_ts (ms), the order within a key; set whenever order_key is. */
  @Column({ name: 'order_ts', type: 'bigint', nullable: true, select: false })
  orderTs?: string | null;
}
