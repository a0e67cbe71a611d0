import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class RecordingFileResponse {
  @ApiPropertyOptional({ example: 'a1b2c3d4-0001', description: 'Absent on CC and TIMELINE files' })
  id?: string;

  @ApiProperty({ example: '4444AAAiAAAAAiAiAiiAii==' })
  meeting_id: string;

  @ApiProperty({ example: '2025-01-01T10:00:10Z' })
  recording_start: string;

  @ApiProperty({ example: '2025-01-01T10:29:50Z' })
  recording_end: string;

  @ApiProperty({ example: 'MP4' })
  file_type: string;

  @ApiPropertyOptional({ example: 'MP4' })
  file_extension?: string;

  @ApiProperty({ example: 3400000 })
  file_size: number;

  @ApiProperty({
    example: 'https://us06web.zoom.us/rec/download/x',
    description: "The platform's URL; fetch the bytes through this service's download route",
  })
  download_url: string;

  @ApiPropertyOptional({ example: 'completed' })
  status?: string;

  @ApiPropertyOptional({ example: 'shared_screen_with_speaker_view' })
  recording_type?: string;
}

export class MeetingRecordingResponse {
  @ApiProperty({ example: '4444AAAiAAAAAiAiAiiAii==' })
  uuid: string;

  @ApiProperty({ example: 85746065432 })
  id: number;

  @ApiProperty({ example: 'x1yCzABCDEfg23HiJKl4mN' })
  host_id: string;

  @ApiProperty({ example: 'Bridge test' })
  topic: string;

  @ApiProperty({ example: '2025-01-01T10:00:05Z' })
  start_time: string;

  @ApiProperty({ example: 30 })
  duration: number;

  @ApiProperty({
    example: 3495663,
    description: "The platform's total, before any file_type filter",
  })
  total_size: number;

  @ApiProperty({ example: 2, description: "The platform's count, before any file_type filter" })
  recording_count: number;

  @ApiProperty({ type: [RecordingFileResponse] })
  recording_files: RecordingFileResponse[];
}

export class RecordingListResponse {
  @ApiProperty({ example: '2025-01-01' })
  from: string;

  @ApiProperty({ example: '2025-01-31' })
  to: string;

  @ApiProperty({ example: 30 })
  page_size: number;

  @ApiProperty({ example: 1, description: "The platform's count, before any file_type filter" })
  total_records: number;

  @ApiProperty({ example: '' })
  next_page_token: string;

  @ApiProperty({
    type: [MeetingRecordingResponse],
    description: 'With file_type, meetings left with no matching file are dropped',
  })
  meetings: MeetingRecordingResponse[];
}
