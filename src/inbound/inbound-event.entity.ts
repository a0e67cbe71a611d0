import { Check, Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { INBOUND_VIAS, VIA, type InboundVia } from '../common/inbound-via';

/**
 * A platform webhook as received. Redeliveries collapse on identity_key, kept unique by
 * inbound_event_keys: partitioned by received_at (docs/operations.md#partitions), this table's
 * unique keys would have to hold it.
 */
@Index('inbound_events_identity_key_idx', { synchronize: false })
@Index('inbound_events_unprocessed_idx', { synchronize: false })
@Index('inbound_events_received_idx', { synchronize: false })
// Participant and ended events by occurrence, for attendance (src/attendance, its migration).
@Index('inbound_events_attendance_idx', { synchronize: false })
// The watcher of app_deauthorized events (src/accounts/deauthorization.watcher.ts).
@Index('inbound_events_deauthorized_idx', { synchronize: false })
// The migrations wrote this check with the list as it stood (they are frozen); inbound-via.spec
// holds the two equal.
@Check('inbound_events_via_ck', `via IN (${INBOUND_VIAS.map((via) => `'${via}'`).join(', ')})`)
@Entity('inbound_events')
export class InboundEventEntity {
  // Time-ordered: see src/database/row-id.ts.
  @PrimaryColumn({ type: 'uuid', default: () => 'uuid_v7()' })
  id: string;

  @Column({ type: 'text' })
  event: string;

  @Column({ name: 'identity_key', type: 'text' })
  identityKey: string;

  @Column({ name: 'event_ts', type: 'bigint', nullable: true })
  eventTs: string | null;

  @Column({ name: 'account_id', type: 'text', nullable: true })
  accountId: string | null;

  @Column({ type: 'jsonb' })
  payload: Record<string, unknown>;

  /**
   * The request's bytes, when `payload` could not hold them as they came (U+0000, unpaired
   * surrogates, numbers past numeric's range, bytes not UTF-8); without a download token.
   */
  @Column({ name: 'raw_body', type: 'bytea', nullable: true, select: false })
  rawBody?: Buffer | null;

  /** How it came: one of INBOUND_VIAS (docs/inbound-sources.md). */
  @Column({ type: 'text', default: VIA.webhook })
  via: InboundVia;

  /** The platform's x-zm-trackingid: what its support asks for. */
  @Column({ name: 'tracking_id', type: 'text', nullable: true })
  trackingId: string | null;

  /** The event's download_token, encrypted; cleared once the event is processed. */
  @Column({ name: 'download_token_encrypted', type: 'text', nullable: true })
  downloadTokenEncrypted: string | null;

  // The partition key, so part of the primary key.
  @PrimaryColumn({ name: 'received_at', type: 'timestamptz', default: () => 'now()' })
  receivedAt: Date;

  @Column({ name: 'processed_at', type: 'timestamptz', nullable: true })
  processedAt: Date | null;

  @Column({ name: 'process_error', type: 'text', nullable: true })
  processError: string | null;

  /** Runs of the inbound job begun on it: past INBOUND_MAX_RUNS it is given up (inbound.processor.ts). */
  @Column({ name: 'process_attempts', type: 'int', default: 0 })
  processAttempts: number;

  /** W3C traceparent of the request that brought it, for the inbound job's spans (docs/operations.md). */
  @Column({ name: 'trace_context', type: 'text', nullable: true })
  traceContext: string | null;
}
