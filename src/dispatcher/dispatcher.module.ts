import { Module } from '@nestjs/common';
import { DispatcherService } from './dispatcher.service';

/**
 * publish() for every role: the API (test endpoint) and the workers that map platform events
 * both import this. No controllers and no processors here, so importing it adds neither.
 */
@Module({
  providers: [DispatcherService],
  exports: [DispatcherService],
})
export class DispatcherModule {}
