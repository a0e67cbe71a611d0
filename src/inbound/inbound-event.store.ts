import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, IsNull, LessThan, Repository } from 'typeorm';
import { MicroBatcher } from '../common/micro-batch';
import { query } from '../database/query';
import { InboundEventEntity } from './inbound-event.entity';

export interface NewInboundEvent {
  event: string;
  identityKey: string;
  eventTs: number | null;
  accountId: string | null;
  payload: Record<string, unknown>;
  /** The platform's x-zm-trackingid header, when sent. */
  trackingId: string | null;
  /** The top-level download_token, already encrypted (never stored in the clear). */
  downloadTokenEncrypted: string | null;
}

const INSERT_SQL = `
  INSERT INTO inbound_events
    (event, identity_key, event_ts, account_id, payload, tracking_id, download_token_encrypted)
  SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::jsonb[],
                       $6::text[], $7::text[])
  ON CONFLICT (identity_key) DO NOTHING
  RETURNING id, identity_key`;

interface InsertedRow {
  id: string;
  identity_key: string;
}

/** An event that cannot even be serialised for its row (JSON.stringify threw). */
export class UnserialisableEventError extends Error {
  constructor(cause: unknown) {
    super(`event cannot be serialised: ${(cause as Error)?.message ?? String(cause)}`);
    this.name = 'UnserialisableEventError';
  }
}

/** Bad data: SQLSTATE class 22 (e.g. \u0000 in a string, which jsonb refuses), or unserialisable. */
export function isDataException(error: unknown): boolean {
  if (error instanceof UnserialisableEventError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** A row as it goes into the batch: serialised by its own caller. */
type SerialisedEvent = Omit<NewInboundEvent, 'payload'> & { payloadJson: string };

/**
 * inbound_events: the durable record of every verified platform event (the injection token;
 * PgInboundEventStore is the real one).
 */
export abstract class InboundEventStore {
  /**
   * Stores the event unless one with the same identity is already stored, atomically, so
   * concurrent redeliveries cannot both win. Returns the new row's id, or null for a duplicate.
   */
  abstract insert(row: NewInboundEvent): Promise<string | null>;

  abstract findById(id: string): Promise<InboundEventEntity | null>;

  /**
   * Marks the event done, unless it is already; `error` records why it was done without a
   * notification. The event's download token is dropped then: what still needs it has a copy.
   */
  abstract markProcessed(id: string, error?: string | null): Promise<void>;

  /** Whether any of the events stored under these identity keys is still unprocessed. */
  abstract anyUnprocessed(identityKeys: string[]): Promise<boolean>;

  /** Records a failed processing attempt without finishing the event (the sweeper retries it). */
  abstract recordError(id: string, error: string): Promise<void>;

  /** Ids of the oldest unprocessed events received before `before`. */
  abstract findUnprocessed(before: Date, limit: number): Promise<string[]>;
}

@Injectable()
export class PgInboundEventStore extends InboundEventStore {
  // Concurrent requests share one INSERT (and one commit): the endpoint's hot path.
  private readonly inserts = new MicroBatcher((rows: SerialisedEvent[]) => this.insertMany(rows));

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @InjectRepository(InboundEventEntity) private readonly repo: Repository<InboundEventEntity>,
  ) {
    super();
  }

  /** ON CONFLICT keeps the first of concurrent redeliveries. */
  insert(row: NewInboundEvent): Promise<string | null> {
    // Serialised here, per caller: a row that cannot be fails its own insert, not the batch.
    const { payload, ...columns } = row;
    let payloadJson: string;
    try {
      payloadJson = JSON.stringify(payload);
    } catch (error) {
      return Promise.reject(new UnserialisableEventError(error));
    }
    return this.inserts.submit({ ...columns, payloadJson });
  }

  private async insertMany(rows: SerialisedEvent[]): Promise<(string | null | Error)[]> {
    // Within one batch the first of several equal identities is the one stored.
    const first = new Map<string, number>();
    rows.forEach((row, i) => first.has(row.identityKey) || first.set(row.identityKey, i));
    const unique = [...first.values()].map((i) => rows[i]);
    let stored: InsertedRow[];
    try {
      stored = await query<InsertedRow>(this.db, INSERT_SQL, [
        unique.map((r) => r.event),
        unique.map((r) => r.identityKey),
        unique.map((r) => r.eventTs),
        unique.map((r) => r.accountId),
        unique.map((r) => r.payloadJson),
        unique.map((r) => r.trackingId),
        unique.map((r) => r.downloadTokenEncrypted),
      ]);
    } catch (error) {
      // One unstorable event must not fail the others that shared its statement.
      if (unique.length > 1 && isDataException(error)) {
        return Promise.all(
          rows.map((row) =>
            this.insertMany([row]).then(
              ([result]) => result,
              (rowError: Error) => rowError,
            ),
          ),
        );
      }
      throw error;
    }
    const ids = new Map(stored.map((r) => [r.identity_key, r.id]));
    return rows.map((row, i) =>
      first.get(row.identityKey) === i ? (ids.get(row.identityKey) ?? null) : null,
    );
  }

  findById(id: string): Promise<InboundEventEntity | null> {
    return this.repo.findOneBy({ id });
  }

  async markProcessed(id: string, error: string | null = null): Promise<void> {
    await this.repo.update(
      { id, processedAt: IsNull() },
      { processedAt: new Date(), processError: error, downloadTokenEncrypted: null },
    );
  }

  /** Served by the unique index on identity_key. */
  async anyUnprocessed(identityKeys: string[]): Promise<boolean> {
    const rows = await query<{ id: string }>(
      this.db,
      `SELECT id FROM inbound_events
       WHERE identity_key = ANY($1::text[]) AND processed_at IS NULL LIMIT 1`,
      [identityKeys],
    );
    return rows.length > 0;
  }

  async recordError(id: string, error: string): Promise<void> {
    await this.repo.update({ id }, { processError: error });
  }

  /** Served by the partial index inbound_events_unprocessed_idx. */
  async findUnprocessed(before: Date, limit: number): Promise<string[]> {
    const rows = await this.repo.find({
      select: { id: true },
      where: { processedAt: IsNull(), receivedAt: LessThan(before) },
      order: { receivedAt: 'ASC' },
      take: limit,
    });
    return rows.map((r) => r.id);
  }
}
