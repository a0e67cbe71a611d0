import { Module } from '@nestjs/common';
import { ZoomModule } from '../zoom/zoom.module';
import { AccountsCoreModule } from '../accounts/accounts-core.module';
import { PlatformPassthrough } from './platform-passthrough.service';
import { PlatformRequestValidator } from './request-validator';

/** One validator (and its compiled operations) per process, however many applications it boots. */
let sharedValidator: PlatformRequestValidator | undefined;

/**
 * The engine of the platform passthrough (docs/api.md#platform-passthrough): the route table, validation against the
 * platform's own schemas and forwarding. It serves no route itself: the meetings and
 * recordings modules mount their groups' operations (passthroughController).
 */
@Module({
  imports: [ZoomModule, AccountsCoreModule],
  providers: [
    PlatformPassthrough,
    {
      provide: PlatformRequestValidator,
      useFactory: () => (sharedValidator ??= new PlatformRequestValidator()),
    },
  ],
  exports: [PlatformPassthrough],
})
export class PlatformApiModule {}
