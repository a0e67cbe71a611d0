import { Module } from '@nestjs/common';
import { ZoomModule } from '../zoom/zoom.module';
import { passthroughController } from './passthrough.controller';
import { PLATFORM_OPERATIONS } from './platform-operations';
import { PlatformPassthrough } from './platform-passthrough.service';
import { PlatformRequestValidator } from './request-validator';

/** Operations served by a hand-written route (src/recordings), which filters their answer. */
const OWN_ROUTES = new Set(['recordingGet', 'recordingsList']);

const PassthroughController = passthroughController(
  PLATFORM_OPERATIONS.filter((op) => !OWN_ROUTES.has(op.id)),
);

/** One compilation per process, however many applications it boots (the tests boot several). */
let sharedValidator: PlatformRequestValidator | undefined;

/**
 * The platform passthrough of SPEC §6 (API role): every operation of the Meetings, Webinars,
 * Users, Cloud Recording and Reports groups at `/api` + its platform path.
 */
@Module({
  imports: [ZoomModule],
  controllers: [PassthroughController],
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
