import { Module } from '@nestjs/common';
import { STATUS_SOURCES } from '../sources/registry';
import { InboundStatusController } from './inbound-status.controller';
import { InboundStatusService, STATUS_READERS } from './inbound-status.service';

const readers = STATUS_SOURCES.map((source) => source.status.reader);

/** API role: GET /api/inbound/status, a part for each source that has one. */
@Module({
  imports: STATUS_SOURCES.flatMap((source) => source.status.module ?? []),
  controllers: [InboundStatusController],
  providers: [
    InboundStatusService,
    ...readers,
    { provide: STATUS_READERS, useFactory: (...read: unknown[]) => read, inject: readers },
  ],
})
export class InboundStatusModule {}
