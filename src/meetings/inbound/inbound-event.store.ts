import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, LessThan, Repository } from 'typeorm';
import { InboundEventEntity } from '../inbound-event.entity';

export interface NewInboundEvent {
  event: string;
  identityKey: string;
  eventTs: number | null;
  accountId: string | null;
  payload: Record<string, unknown>;
}

/** inbound_events: the durable record of every verified platform event. */
@Injectable()
export class InboundEventStore {
  constructor(
    @InjectRepository(InboundEventEntity) private readonly repo: Repository<InboundEventEntity>,
  ) {}

  /**
   * Stores the event unless one with the same identity is already stored; one statement, so
   * concurrent redeliveries cannot both win. Returns the new row's id, or null for a duplicate.
   */
  async insert(row: NewInboundEvent): Promise<string | null> {
    const rows: { id: string }[] = await this.repo.query(
      `INSERT INTO inbound_events (event, identity_key, event_ts, account_id, payload)
       VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (identity_key) DO NOTHING
       RETURNING id`,
      [row.event, row.identityKey, row.eventTs, row.accountId, JSON.stringify(row.payload)],
    );
    return rows[0]?.id ?? null;
  }

  findById(id: string): Promise<InboundEventEntity | null> {
    return this.repo.findOneBy({ id });
  }

  /** Marks the event done; `error` records why it was done without a notification. */
  async markProcessed(id: string, error: string | null = null): Promise<void> {
    await this.repo.update(
      { id, processedAt: IsNull() },
      { processedAt: new Date(), processError: error },
    );
  }

  /** Records a failed processing attempt without finishing the event (the sweeper retries it). */
  async recordError(id: string, error: string): Promise<void> {
    await this.repo.update({ id }, { processError: error });
  }

  /** Oldest unprocessed events received before `before` (served by the partial index). */
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
