import { ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsObject,
  IsString,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { IsUtcTimestamp, Optional } from './validators';

export const MEETING_TYPES = [1, 2, 3, 8] as const;

export class MeetingSettingsDto {
  @ApiPropertyOptional({ example: false, description: 'Participants may join before the host' })
  @Optional()
  @IsBoolean()
  join_before_host?: boolean;

  @ApiPropertyOptional({ example: true, description: 'Participants wait in a waiting room' })
  @Optional()
  @IsBoolean()
  waiting_room?: boolean;
}

/** The meeting fields of the platform's create call; anything else is refused before it is sent. */
export class CreateMeetingDto {
  @ApiPropertyOptional({ example: 'Weekly sync', maxLength: 200 })
  @Optional()
  @IsString()
  @IsNotEmpty()
  @MaxLength(200)
  topic?: string;

  @ApiPropertyOptional({
    enum: MEETING_TYPES,
    default: 2,
    example: 2,
    description:
      '1 instant, 2 scheduled, 3 recurring without fixed time, 8 recurring with fixed time',
  })
  @Optional()
  @IsInt()
  @IsIn(MEETING_TYPES, { message: 'type must be one of 1, 2, 3, 8' })
  type?: (typeof MEETING_TYPES)[number];

  @ApiPropertyOptional({
    example: '2025-01-31T14:00:00Z',
    description: 'ISO 8601 in UTC, ending in Z',
  })
  @Optional()
  @IsUtcTimestamp()
  start_time?: string;

  @ApiPropertyOptional({ example: 30, minimum: 1, description: 'Minutes' })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(100000)
  duration?: number;

  @ApiPropertyOptional({ type: MeetingSettingsDto })
  @Optional()
  @IsObject()
  @ValidateNested()
  @Type(() => MeetingSettingsDto)
  settings?: MeetingSettingsDto;
}

export class UpdateMeetingDto extends PartialType(CreateMeetingDto) {}
