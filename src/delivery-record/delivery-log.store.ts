import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { Cursor, keysetPage } from '../common/cursor';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import { DeliveryEntity, DeliveryStatus } from './delivery.entity';

/** Which of a webhook's deliveries the log lists. */
export interface DeliveryLogFilter {
  status?: DeliveryStatus;
  event?: string;
}

/** The delivery log's reads (docs/api.md): a webhook's deliveries, one with its event, attempts. */
@Injectable()
export class DeliveryLogStore {
  constructor(
    @InjectRepository(DeliveryEntity) private readonly deliveries: Repository<DeliveryEntity>,
    @InjectRepository(DeliveryAttemptEntity)
    private readonly attempts: Repository<DeliveryAttemptEntity>,
  ) {}

  /** The webhook's deliveries, newest first after `cursor`: `limit + 1` at most (see toPage). */
  page(
    webhookId: string,
    filter: DeliveryLogFilter,
    cursor: Cursor | null,
    limit: number,
  ): Promise<DeliveryEntity[]> {
    const qb = this.deliveries
      .createQueryBuilder('d')
      .where('d.webhook_id = :webhookId', { webhookId });
    if (filter.status) qb.andWhere('d.status = :status', { status: filter.status });
    if (filter.event) qb.andWhere('d.event = :event', { event: filter.event });
    return keysetPage(qb, 'd', cursor, limit).getMany();
  }

  /** The webhook's delivery with its event row (whose body it sends). */
  withEvent(webhookId: string, deliveryId: string): Promise<DeliveryEntity | null> {
    return this.deliveries.findOne({
      where: { id: deliveryId, webhookId },
      relations: { eventRow: true },
    });
  }

  /** The delivery's attempts, first first. */
  attemptsOf(deliveryId: string): Promise<DeliveryAttemptEntity[]> {
    return this.attempts.find({ where: { deliveryId }, order: { attempt: 'ASC' } });
  }
}
