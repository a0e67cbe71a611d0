import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { DeliveryEntity } from './delivery.entity';

@Index('delivery_attempts_delivery_attempt_uq', ['deliveryId', 'attempt'], { unique: true })
@Entity('delivery_attempts')
export class DeliveryAttemptEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'delivery_id', type: 'uuid' })
  deliveryId: string;

  @ManyToOne(() => DeliveryEntity, { onDelete: 'CASCADE' })
  @JoinColumn({
    name: 'delivery_id',
    foreignKeyConstraintName: 'delivery_attempts_delivery_id_fkey',
  })
  delivery?: DeliveryEntity;

  @Column({ type: 'integer' })
  attempt: number;

  @Column({ name: 'started_at', type: 'timestamptz' })
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
