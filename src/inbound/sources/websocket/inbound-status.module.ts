import { Module } from '@nestjs/common';
import { InboundStatusController } from './inbound-status.controller';
import { InboundStatusService } from './inbound-status.service';
import { WebsocketCoreModule } from './websocket-core.module';

/** API role: GET /api/inbound/status. */
@Module({
  imports: [WebsocketCoreModule],
  controllers: [InboundStatusController],
  providers: [InboundStatusService],
})
export class InboundStatusModule {}
