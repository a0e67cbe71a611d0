import { ApiProperty } from '@nestjs/swagger';

/** The webhook's part of GET /api/inbound/status (docs/inbound-sources.md#status). */
export class WebhookSourceStatus {
  @ApiProperty({ example: true, description: 'ZOOM_WEBHOOK_SECRET_TOKEN is set' })
  configured: boolean;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-01T10:00:01.250Z',
    description: 'When the latest event came by POST /zoom/events; null: none kept',
  })
  last_event_at: string | null;
}
