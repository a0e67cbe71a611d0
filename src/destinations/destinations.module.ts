import { Module } from '@nestjs/common';
import { DestinationSenders } from './destination-senders';

/**
 * The destinations of docs/destinations.md, as registry.ts lists them. One instance per app,
 * shared by the deliveries worker (which sends) and the readiness check (which shows the
 * brokers' state).
 */
@Module({
  providers: [DestinationSenders],
  exports: [DestinationSenders],
})
export class DestinationsModule {}
