import { Module } from '@nestjs/common';
import { ZoomModule } from '../zoom/zoom.module';
import { MeetingsController } from './meetings.controller';
import { MeetingsService } from './meetings.service';
import { UsersController } from './users.controller';

/** The meeting and user passthrough of SPEC §6 (API role). */
@Module({
  imports: [ZoomModule],
  controllers: [MeetingsController, UsersController],
  providers: [MeetingsService],
})
export class MeetingsModule {}
