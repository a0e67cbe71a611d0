import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { decodeCursor, toPage } from '../common/cursor';
import { WebhookEntity } from '../webhooks/webhook.entity';
import { DeliveryAttemptEntity } from './delivery-attempt.entity';
import { DeliveryEntity } from './delivery.entity';
import { DispatcherService } from './dispatcher.service';
import {
  DeliveryDetailDto,
  DeliveryDto,
  DeliveryPageDto,
  toDeliveryDetailDto,
  toDeliveryDto,
} from './dto/delivery.dto';
import { ListDeliveriesQuery } from './dto/list-deliveries-query.dto';

const DEFAULT_LIMIT = 50;

/** The test endpoint and the delivery log of a client's own webhooks. */
@Injectable()
export class DeliveryLogService {
  constructor(
    @InjectRepository(WebhookEntity) private readonly webhooks: Repository<WebhookEntity>,
    @InjectRepository(DeliveryEntity) private readonly deliveries: Repository<DeliveryEntity>,
    @InjectRepository(DeliveryAttemptEntity)
    private readonly attempts: Repository<DeliveryAttemptEntity>,
    private readonly dispatcher: DispatcherService,
  ) {}

  async sendTest(ownerClientId: string, webhookId: string): Promise<DeliveryDto> {
    const webhook = await this.findOwnedWebhook(ownerClientId, webhookId);
    const deliveryId = webhook.active ? await this.dispatcher.publishTest(webhook) : null;
    if (deliveryId === null) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'The webhook is inactive; activate it (PATCH active: true) to send a test',
      );
    }
    return toDeliveryDto(await this.deliveries.findOneByOrFail({ id: deliveryId }));
  }

  async list(
    ownerClientId: string,
    webhookId: string,
    query: ListDeliveriesQuery,
  ): Promise<DeliveryPageDto> {
    const cursor = decodeCursor(query.cursor);
    await this.findOwnedWebhook(ownerClientId, webhookId);
    const limit = query.limit ?? DEFAULT_LIMIT;
    const qb = this.deliveries
      .createQueryBuilder('d')
      .where('d.webhook_id = :webhookId', { webhookId })
      .orderBy('d.created_at', 'DESC')
      .addOrderBy('d.id', 'DESC')
      .limit(limit + 1);
    if (query.status) qb.andWhere('d.status = :status', { status: query.status });
    if (query.event) qb.andWhere('d.event = :event', { event: query.event });
    if (cursor) {
      qb.andWhere('(d.created_at, d.id) < (:createdAt::timestamptz, :id::uuid)', {
        createdAt: cursor.createdAt,
        id: cursor.id,
      });
    }
    return toPage(await qb.getMany(), limit, toDeliveryDto);
  }

  async get(
    ownerClientId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryDetailDto> {
    await this.findOwnedWebhook(ownerClientId, webhookId);
    const delivery = await this.deliveries.findOneBy({ id: deliveryId, webhookId });
    if (!delivery) throw new ApiError(HttpStatus.NOT_FOUND, 'Delivery not found');
    const attempts = await this.attempts.find({
      where: { deliveryId },
      order: { attempt: 'ASC' },
    });
    return toDeliveryDetailDto(delivery, attempts);
  }

  // TODO(issue-3): use WebhooksService.findOwned once the webhooks CRUD is on main.
  private async findOwnedWebhook(ownerClientId: string, id: string): Promise<WebhookEntity> {
    const webhook = await this.webhooks.findOneBy({ id, ownerClientId });
    if (!webhook) throw new ApiError(HttpStatus.NOT_FOUND, 'Webhook not found');
    return webhook;
  }
}
