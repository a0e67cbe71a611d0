import { Module } from '@nestjs/common';
import { ZoomHttp } from './zoom-http';
import { ZoomTokenProvider } from './zoom-token.provider';
import { ZoomClient } from './zoom.client';

/**
 * The platform REST client, free of HTTP routes so that worker-role modules (the recording
 * automation) can import it as well as the passthrough controllers. Nest keeps one instance
 * per process, so every importer shares one token cache.
 */
@Module({
  providers: [ZoomHttp, ZoomTokenProvider, ZoomClient],
  // The token too: the platform's event socket (src/inbound/sources/websocket) opens with it;
  // and the HTTP client, for the calls of installed accounts (src/accounts).
  exports: [ZoomClient, ZoomTokenProvider, ZoomHttp],
})
export class ZoomModule {}
