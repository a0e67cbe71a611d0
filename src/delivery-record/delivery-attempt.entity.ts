import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

// Not unique: partitioned by started_at (docs/operations.md#partitions), a unique key would have
// to hold it. Only the update that moves a delivery's attempt_count writes its attempt.
@Index('delivery_attempts_delivery_attempt_idx', { synchronize: false })
@Entity('delivery_attempts')
export class DeliveryAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @Column({ type: 'integer' })
  attempt: number;

  // The partition key, so part of the primary key.
  @PrimaryColumn({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'duration_ms', type: 'integer' })
  durationMs: number;

  @Column({ name: 'status_code', type: 'integer', nullable: true })
  statusCode: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  /** First 1 KiB of the receiver's answer. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;
}
