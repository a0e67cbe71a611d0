import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { VIA } from '../../../common/inbound-via';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import { query } from '../../../database/query';
import type { Statement } from '../../../delivery-record/statement';
import type { SourceStatusReader } from '../inbound-source';
import { WebhookSourceStatus } from './dto/webhook-status.response';

const LAST_EVENT_SQL = `SELECT received_at FROM inbound_events WHERE via = $1 ORDER BY received_at DESC LIMIT 1`;

export const WEBHOOK_STATUS_STATEMENTS: Statement[] = [
  { method: 'WebhookStatus.read', sql: LAST_EVENT_SQL },
];

/** The webhook's part of the inbound status: set up or not, and its latest event kept. */
@Injectable()
export class WebhookStatus implements SourceStatusReader<WebhookSourceStatus> {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly db: DataSource,
  ) {}

  async read(): Promise<WebhookSourceStatus> {
    const [row] = await query<{ received_at: Date }>(this.db, LAST_EVENT_SQL, [VIA.webhook]);
    return {
      configured: this.config.zoom.webhookSecretTokens.length > 0,
      last_event_at: row?.received_at.toISOString() ?? null,
    };
  }
}
