import { Module } from '@nestjs/common';
import { BrokerDestinations } from './broker-destinations';
import { HttpDestination } from './http.destination';

/**
 * The destinations of docs/destinations.md: HTTP and the brokers. One instance per app, shared by the
 * deliveries worker (which sends) and the readiness check (which shows the brokers' state).
 */
@Module({
  providers: [HttpDestination, BrokerDestinations],
  exports: [HttpDestination, BrokerDestinations],
})
export class DestinationsModule {}
