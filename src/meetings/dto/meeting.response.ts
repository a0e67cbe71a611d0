import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MeetingSettingsDto } from './meeting.dto';

/** A meeting as the platform returns it; fields beyond these pass through untouched. */
export class MeetingResponse {
  @ApiProperty({ example: 85746065432, format: 'int64' })
  id: number;

  @ApiPropertyOptional({ example: '4444AAAiAAAAAiAiAiiAii==', description: 'Returned by GET' })
  uuid?: string;

  @ApiProperty({ example: 'x1yCzABCDEfg23HiJKl4mN' })
  host_id: string;

  @ApiPropertyOptional({ example: 'jchill@example.com', description: 'Returned on create' })
  host_email?: string;

  @ApiProperty({ example: 'Weekly sync' })
  topic: string;

  @ApiProperty({ example: 2 })
  type: number;

  @ApiPropertyOptional({ example: '2025-01-31T14:00:00Z' })
  start_time?: string;

  @ApiPropertyOptional({ example: 30 })
  duration?: number;

  @ApiPropertyOptional({ example: 'UTC' })
  timezone?: string;

  @ApiProperty({ example: '2025-01-20T09:12:44Z' })
  created_at: string;

  @ApiProperty({ example: 'https://us05web.zoom.us/j/85746065432?pwd=abc' })
  join_url: string;

  @ApiPropertyOptional({ example: 'https://us05web.zoom.us/s/85746065432?zak=…' })
  start_url?: string;

  @ApiPropertyOptional({ example: 'a1B2c3' })
  password?: string;

  @ApiPropertyOptional({ type: MeetingSettingsDto })
  settings?: MeetingSettingsDto;
}

export class MeetingListResponse {
  @ApiProperty({ example: 30 })
  page_size: number;

  @ApiProperty({ example: 1 })
  total_records: number;

  @ApiProperty({ example: '', description: 'Empty on the last page' })
  next_page_token: string;

  @ApiProperty({ type: [MeetingResponse] })
  meetings: MeetingResponse[];
}

export class UserResponse {
  @ApiProperty({ example: 'x1yCzABCDEfg23HiJKl4mN' })
  id: string;

  @ApiProperty({ example: 'jchill@example.com' })
  email: string;

  @ApiPropertyOptional({ example: 'Jill' })
  first_name?: string;

  @ApiPropertyOptional({ example: 'Chill' })
  last_name?: string;

  @ApiPropertyOptional({ example: 2, description: '1 basic, 2 licensed' })
  type?: number;

  @ApiPropertyOptional({ example: 'active' })
  status?: string;
}

export class UserListResponse {
  @ApiProperty({ example: 30 })
  page_size: number;

  @ApiProperty({ example: 1 })
  total_records: number;

  @ApiProperty({ example: '' })
  next_page_token: string;

  @ApiProperty({ type: [UserResponse] })
  users: UserResponse[];
}
