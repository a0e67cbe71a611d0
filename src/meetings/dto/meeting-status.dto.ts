import { ApiProperty } from '@nestjs/swagger';
import { IsIn } from 'class-validator';

export const MEETING_ACTIONS = ['end', 'recover'] as const;

export class MeetingStatusDto {
  @ApiProperty({
    enum: MEETING_ACTIONS,
    example: 'end',
    description: '`end` ends a running meeting; `recover` restores a deleted one',
  })
  @IsIn(MEETING_ACTIONS)
  action: (typeof MEETING_ACTIONS)[number];
}
