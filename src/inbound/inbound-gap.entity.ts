import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * An interval with no open, acknowledged platform socket (docs/inbound-sources.md): open while
 * `endedAt` is null. The WebSocket source opens and ends gaps; reconciliation reconciles an
 * ended one and records its run in `reconciliationId`.
 */
@Index('inbound_gaps_unreconciled_idx', { synchronize: false })
@Index('inbound_gaps_started_idx', { synchronize: false })
@Check('inbound_gaps_order_ck', `ended_at IS NULL OR ended_at >= started_at`)
@Entity('inbound_gaps')
export class InboundGapEntity {
  // Time-ordered: see src/database/row-id.ts.
  @PrimaryColumn({ type: 'uuid', default: () => 'uuid_v7()' })
  id: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt: Date;

  @Column({ name: 'ended_at', type: 'timestamptz', nullable: true })
  endedAt: Date | null;

  @Column({ name: 'reconciliation_id', type: 'uuid', nullable: true })
  reconciliationId: string | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
