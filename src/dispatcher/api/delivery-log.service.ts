import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { decodeCursor, toPage } from '../../common/cursor';
import { DEFAULT_PAGE_LIMIT } from '../../common/page-query';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { DeliveryControlStore } from '../../delivery-record/delivery-control.store';
import { DeliveryLogStore } from '../../delivery-record/delivery-log.store';
import { TESTS_PER_WINDOW, TEST_WINDOW_MS, testRetryAfterSeconds } from './test-rate';
import { DispatcherService } from '../publish/dispatcher.service';
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
    private readonly log: DeliveryLogStore,
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
    const rows = await this.log.page(webhookId, query, cursor, limit);
    return toPage(rows, limit, toDeliveryResponse);
  }

  async get(
    ownerClientId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryDetailResponse> {
    await this.webhooks.findOwned(ownerClientId, webhookId);
    const delivery = await this.log.withEvent(webhookId, deliveryId);
    // The body is the event's (or, stored before it moved there, the delivery's own).
    const body = delivery?.body ?? delivery?.eventBody;
    if (!delivery || !body) throw new ApiError(HttpStatus.NOT_FOUND, 'Delivery not found');
    const attempts = await this.log.attemptsOf(deliveryId);
    return toDeliveryDetailResponse(delivery, body, attempts);
  }
}
