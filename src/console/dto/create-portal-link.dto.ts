import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { FieldRule, Satisfies } from '../../common/field-rule';

export const PORTAL_TTL = { min: 60, max: 86400, default: 3600 } as const;

const ttlRule: FieldRule = (value, field) =>
  Number.isInteger(value) &&
  (value as number) >= PORTAL_TTL.min &&
  (value as number) <= PORTAL_TTL.max
    ? null
    : `${field} must be an integer from ${PORTAL_TTL.min} to ${PORTAL_TTL.max}`;

/** Body of POST /api/portal-links (docs/console.md). Any other field is refused. */
export class CreatePortalLinkDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: PORTAL_TTL.min,
    maximum: PORTAL_TTL.max,
    default: PORTAL_TTL.default,
    example: 3600,
    description: 'How long the link signs a person in, in seconds',
  })
  @Satisfies(ttlRule, { optional: true })
  ttl_seconds?: number;
}

export class PortalLinkResponse {
  @ApiProperty({
    format: 'uri',
    example:
      'https://bridge.example.com/console/#portal=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJvcHMifQ.c2lnbmF0dXJl',
    description:
      'Opens the console signed in as the calling client, with at most webhooks:read and ' +
      'webhooks:write. The credential is in the fragment (after #), which browsers never send ' +
      'to a server or in a Referer; it stops working at expires_at.',
  })
  url: string;

  @ApiProperty({ format: 'date-time', example: '2026-01-01T10:00:00.000Z' })
  expires_at: string;
}
