import { Module } from '@nestjs/common';
import { DispatcherModule } from '../../../dispatcher/publish/dispatcher.module';
import { ZoomModule } from '../../../zoom/zoom.module';
import { InboundStoreModule } from '../../inbound-store.module';
import { InboundService } from '../../inbound.service';
import { WebsocketCoreModule } from './websocket-core.module';
import { WebsocketSource } from './websocket-source.service';

/** Roles worker and all: the lease, and with it the platform's event socket. */
@Module({
  imports: [WebsocketCoreModule, ZoomModule, InboundStoreModule, DispatcherModule],
  providers: [InboundService, WebsocketSource],
})
export class WebsocketSourceModule {}
