import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DestinationsModule } from '../destinations/destinations.module';
import { WebsocketCoreModule } from '../inbound/sources/websocket/websocket-core.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), DestinationsModule, WebsocketCoreModule],
  controllers: [HealthController],
})
export class HealthModule {}
