import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQuery } from './page.query';

export const MEETING_LIST_TYPES = [
  'scheduled',
  'live',
  'upcoming',
  'upcoming_meetings',
  'previous_meetings',
] as const;

export class ListMeetingsQuery extends PageQuery {
  @ApiPropertyOptional({ enum: MEETING_LIST_TYPES, default: 'scheduled' })
  @IsOptional()
  @IsIn(MEETING_LIST_TYPES)
  type?: (typeof MEETING_LIST_TYPES)[number];
}
