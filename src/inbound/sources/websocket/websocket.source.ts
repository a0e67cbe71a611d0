import { VIA } from '../../../common/inbound-via';
import type { InboundSource } from '../inbound-source';
import { WebsocketSourceStatus } from './dto/websocket-status.response';
import { WebsocketCoreModule } from './websocket-core.module';
import { WebsocketSourceModule } from './websocket-source.module';
import { WebsocketStatus } from './websocket-status';

/** The platform's event socket, held by one worker at a time (docs/inbound-sources.md). */
export const websocketSource: InboundSource<WebsocketSourceStatus> = {
  via: VIA.websocket,
  worker: [WebsocketSourceModule],
  status: { module: WebsocketCoreModule, reader: WebsocketStatus, response: WebsocketSourceStatus },
};
