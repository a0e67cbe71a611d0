import { ApiProperty } from '@nestjs/swagger';
import { SOCKET_STATES, SocketStateName } from '../socket-state';

/** One interval with no acknowledged socket (docs/inbound-sources.md#gaps). */
export class InboundGapResponse {
  @ApiProperty({
    format: 'date-time',
    example: '2026-01-01T09:58:12.410Z',
    description: 'The last frame of the socket before the drop',
  })
  from: string;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-01T09:58:15.002Z',
    description: 'When the next socket was acknowledged; null while the gap is still open',
  })
  until: string | null;

  @ApiProperty({
    type: String,
    format: 'uuid',
    nullable: true,
    example: null,
    description:
      'The reconciliation run scheduled for this gap (GET /api/reconciliations/:id); null until ' +
      'one is (RECONCILE_GAP_DELAY_MS after the gap ends)',
  })
  reconciliation_id: string | null;
}

/** The WebSocket's part of GET /api/inbound/status (docs/inbound-sources.md#status). */
export class WebsocketSourceStatus {
  @ApiProperty({
    example: true,
    description: 'ZOOM_WS_SUBSCRIPTION_ID and the server-to-server credentials are set',
  })
  configured: boolean;

  @ApiProperty({
    enum: SOCKET_STATES,
    example: 'connected',
    description:
      '`connected`: a process holds the socket and the platform acknowledged it; `connecting`: ' +
      'a process holds the lease and is opening (or reopening) the socket; `standby`: no ' +
      'process holds it at this moment (the lease is free or being taken over); `off`: not ' +
      'configured',
  })
  state: SocketStateName;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-01T09:58:15.002Z',
    description: 'When the socket now open was acknowledged; null unless `connected`',
  })
  connected_since: string | null;

  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    example: '2026-01-01T10:00:00.000Z',
    description:
      'The latest frame recorded (heartbeat answers included; written at most every 2 s); ' +
      'null: never connected',
  })
  last_frame_at: string | null;

  @ApiProperty({
    example: 3,
    minimum: 0,
    description:
      'Sockets opened to replace an earlier one (a drop, a refused token, a new holder), ' +
      'since the service first connected',
  })
  reconnects: number;

  @ApiProperty({
    type: [InboundGapResponse],
    maxItems: 20,
    description: 'The 20 latest gaps, newest first',
  })
  gaps: InboundGapResponse[];
}
