import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { DestinationsModule } from '../dispatcher/destinations/destinations.module';
import { HealthController } from './health.controller';

@Module({
  imports: [TerminusModule.forRoot({ logger: false }), DestinationsModule],
  controllers: [HealthController],
})
export class HealthModule {}
