import { HttpStatus, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiError } from '../common/api-error';
import { decodeCursor, keysetPage, toPage } from '../common/cursor';
import { DEFAULT_PAGE_LIMIT } from '../common/page-query';
import { WebhooksService } from '../webhooks/webhooks.service';
import { DeliveryAttemptEntity } from '../delivery-record/delivery-attempt.entity';
import { DeliveryControlStore } from '../delivery-record/delivery-control.store';
import { DeliveryEntity } from '../delivery-record/delivery.entity';
import { TESTS_PER_WINDOW, TEST_WINDOW_MS, testRetryAfterSeconds } from './test-rate';
import { DispatcherService } from './dispatcher.service';
import {
  DeliveryDetailResponse,
  DeliveryResponse,
  DeliveryListResponse,
  toDeliveryDetailResponse,
  toDeliveryResponse,
} from './dto/delivery.response';
import { ListDeliveriesQuery } from './dto/list-deliveries.query';

/** The test endpoint and the delivery log of a client's own webhooks. */
@Injectable()
export class DeliveryLogService {
  constructor(
    private readonly webhooks: WebhooksService,
    @InjectRepository(DeliveryEntity) private readonly deliveries: Repository<DeliveryEntity>,
    @InjectRepository(DeliveryAttemptEntity)
    private readonly attempts: Repository<DeliveryAttemptEntity>,
    private readonly dispatcher: DispatcherService,
    private readonly control: DeliveryControlStore,
  ) {}

  async sendTest(ownerClientId: string, webhookId: string): Promise<DeliveryResponse> {
    const webhook = await this.webhooks.findOwned(ownerClientId, webhookId);
    if (webhook.active) await this.assertTestAllowed(webhook.id);
    const delivery = webhook.active ? await this.dispatcher.publishTest(webhook) : null;
    if (delivery === null) {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'The webhook is inactive; activate it (PATCH active: true) to send a test',
      );
    }
    return toDeliveryResponse(delivery);
  }

  /** 429 with Retry-After while the webhook has had TESTS_PER_WINDOW tests in the window. */
  private async assertTestAllowed(webhookId: string): Promise<void> {
    const now = Date.now();
    const recent = await this.control.recentTests(
      webhookId,
      new Date(now - TEST_WINDOW_MS),
      TESTS_PER_WINDOW,
    );
    const waitSeconds = testRetryAfterSeconds(recent, now);
    if (waitSeconds > 0) {
      throw new ApiError(
        HttpStatus.TOO_MANY_REQUESTS,
        `At most ${TESTS_PER_WINDOW} tests per webhook in ${TEST_WINDOW_MS / 1000} s; ` +
          `try again in ${waitSeconds} s`,
        { headers: { 'retry-after': String(waitSeconds) } },
      );
    }
  }

  async list(
    ownerClientId: string,
    webhookId: string,
    query: ListDeliveriesQuery,
  ): Promise<DeliveryListResponse> {
    const cursor = decodeCursor(query.cursor);
    await this.webhooks.findOwned(ownerClientId, webhookId);
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const qb = this.deliveries
      .createQueryBuilder('d')
      .where('d.webhook_id = :webhookId', { webhookId });
    if (query.status) qb.andWhere('d.status = :status', { status: query.status });
    if (query.event) qb.andWhere('d.event = :event', { event: query.event });
    keysetPage(qb, 'd', cursor, limit);
    return toPage(await qb.getMany(), limit, toDeliveryResponse);
  }

  async get(
    ownerClientId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryDetailResponse> {
    await this.webhooks.findOwned(ownerClientId, webhookId);
    const delivery = await this.deliveries.findOne({
      where: { id: deliveryId, webhookId },
      relations: { eventRow: true },
    });
    // The body is the event's (or, stored before it moved there, the delivery's own).
    const body = delivery?.body ?? delivery?.eventRow?.body;
    if (!delivery || !body) throw new ApiError(HttpStatus.NOT_FOUND, 'Delivery not found');
    const attempts = await this.attempts.find({
      where: { deliveryId },
      order: { attempt: 'ASC' },
    });
    return toDeliveryDetailResponse(delivery, body, attempts);
  }
}
