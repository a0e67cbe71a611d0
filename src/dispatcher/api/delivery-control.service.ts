import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { APP_CONFIG } from '../../config/config.module';
import { AppConfig } from '../../config/config.types';
import { MetricsService } from '../../metrics/metrics.service';
import { WebhookEntity } from '../../webhooks/webhook.entity';
import { WebhooksService } from '../../webhooks/webhooks.service';
import { DeliveryControlStore, ReplayWindow } from '../../delivery-record/delivery-control.store';
import { DispatcherService } from '../publish/dispatcher.service';
import { DeliveryResponse, toDeliveryResponse } from './dto/delivery.response';
import { ReplayDto, ReplayResponse } from './dto/replay.dto';

const DAY_MS = 24 * 60 * 60 * 1000;

const inactive = (what: string) =>
  new ApiError(
    HttpStatus.CONFLICT,
    `The webhook is inactive; enable it (PATCH active: true) to ${what}`,
  );

/**
 * Sending deliveries again (docs/api.md#receiver-health): one delivery, or a window of them, each with a fresh
 * series of attempts under its own delivery id; and the events an inactive or disabled
 * webhook missed. Scoped to the calling client's webhooks.
 */
@Injectable()
export class DeliveryControlService {
  private readonly logger = new Logger(DeliveryControlService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly webhooks: WebhooksService,
    private readonly store: DeliveryControlStore,
    private readonly metrics: MetricsService,
    private readonly dispatcher: DispatcherService,
  ) {}

  async redeliver(
    ownerClientId: string,
    webhookId: string,
    deliveryId: string,
  ): Promise<DeliveryResponse> {
    const webhook = await this.webhooks.findOwned(ownerClientId, webhookId);
    if (!webhook.active) throw inactive('redeliver');
    const delivery = await this.store.redeliver(webhook.id, deliveryId);
    if (delivery === null) throw new ApiError(HttpStatus.NOT_FOUND, 'Delivery not found');
    if (delivery === 'pending') {
      throw new ApiError(
        HttpStatus.CONFLICT,
        'The delivery is pending: its attempts are still under way',
      );
    }
    this.metrics.deliveriesRedelivered.inc({ how: 'redeliver' });
    this.logger.log(
      `delivery ${deliveryId} of webhook ${webhook.id} redelivered by ${ownerClientId}`,
    );
    await this.dispatcher.queueDeliveries([{ id: delivery.id, webhookId: webhook.id }]);
    return toDeliveryResponse(delivery);
  }

  async replay(ownerClientId: string, webhookId: string, dto: ReplayDto): Promise<ReplayResponse> {
    const window = this.window(dto);
    const webhook: WebhookEntity = await this.webhooks.findOwned(ownerClientId, webhookId);
    if (!webhook.active) throw inactive('replay');
    const replayed = await this.store.replay(webhook.id, window);
    const missed = dto.missed ? await this.store.createMissed(webhook, window) : [];
    this.metrics.deliveriesRedelivered.inc({ how: 'replay' }, replayed.length);
    this.metrics.deliveriesRedelivered.inc({ how: 'missed' }, missed.length);
    this.logger.log(
      `webhook ${webhook.id} replayed by ${ownerClientId}: ${replayed.length} ${window.status} ` +
        `deliveries${dto.missed ? `, ${missed.length} missed events` : ''}`,
    );
    await this.dispatcher.queueDeliveries(
      [...replayed, ...missed].map((id) => ({ id, webhookId: webhook.id })),
    );
    return { count: replayed.length + missed.length };
  }

  /** The window of a replay body; 400 naming the field when it cannot be served. */
  private window(dto: ReplayDto): ReplayWindow {
    const since = new Date(dto.since);
    const until = dto.until === undefined ? null : new Date(dto.until);
    const days = this.config.retention.days;
    if (since.getTime() < Date.now() - days * DAY_MS) {
      throw ApiError.validation([
        {
          field: 'since',
          message: `since must be within the last ${days} days (RETENTION_DAYS): older records are deleted`,
        },
      ]);
    }
    if (until !== null && until <= since) {
      throw ApiError.validation([{ field: 'until', message: 'until must be later than since' }]);
    }
    return { since, until, status: dto.status ?? 'failed' };
  }
}
