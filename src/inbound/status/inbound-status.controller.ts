import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScopes } from '../../auth/scopes.decorator';
import { InboundStatusResponse } from './inbound-status.response';
import { InboundStatusService } from './inbound-status.service';

/** GET /api/inbound/status: how the platform's events reach the service (docs/inbound-sources.md). */
@ApiTags('inbound')
@Controller('api/inbound')
export class InboundStatusController {
  constructor(private readonly inbound: InboundStatusService) {}

  @Get('status')
  @RequireScopes('bridge:admin')
  @ApiOperation({
    summary: "How the platform's events come in: webhook and WebSocket",
    description:
      'The webhook endpoint (configured, latest event) and the platform WebSocket: its state ' +
      'across the whole deployment, when it connected, its latest frame, how often it was ' +
      'replaced, and the 20 latest gaps (intervals with no acknowledged socket, in which the ' +
      'platform sent nothing; each is reconciled once settled). See docs/inbound-sources.md.',
  })
  @ApiOkResponse({ type: InboundStatusResponse })
  status(): Promise<InboundStatusResponse> {
    return this.inbound.status();
  }
}
