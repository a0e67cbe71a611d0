import { Module } from '@nestjs/common';
import { passthroughController } from '../platform-api/passthrough.controller';
import { PlatformApiModule } from '../platform-api/platform-api.module';
import { PLATFORM_OPERATIONS } from '../platform-api/platform-operations';
import { MEETING_PATH_RULES } from './meeting-path-rules';

/** Every group of the platform's Meeting API but Cloud Recording, which src/recordings serves. */
export const MEETING_GROUPS = new Set(['Meetings', 'Webinars', 'Users', 'Reports']);

/**
 * The meetings, webinars, users and reports passthrough of docs/api.md#platform-passthrough (API role): each operation
 * of those groups at `/api` + its platform path, validated against the platform's spec.
 */
@Module({
  imports: [PlatformApiModule],
  controllers: [
    passthroughController(
      'MeetingsPassthroughController',
      PLATFORM_OPERATIONS.filter((op) => MEETING_GROUPS.has(op.group)),
      MEETING_PATH_RULES,
    ),
  ],
})
export class MeetingsModule {}
