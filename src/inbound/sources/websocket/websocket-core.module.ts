import { Module } from '@nestjs/common';
import { SocketLease } from './socket-lease';
import { SocketRecordStore } from './socket-record.store';
import { SocketState } from './socket-state';

/**
 * What the socket's holder, the status route and readiness share: one lease, one record and
 * one state per process, whichever of them a role loads.
 */
@Module({
  providers: [SocketLease, SocketRecordStore, SocketState],
  exports: [SocketLease, SocketRecordStore, SocketState],
})
export class WebsocketCoreModule {}
