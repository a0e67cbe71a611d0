import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';

export class RecordingFileParams {
  @ApiProperty({
    description:
      "The meeting id (digits) or the UUID of one meeting instance. Encode a UUID's `/` as " +
      '`%2F` in this path; the service double-encodes UUIDs that begin with `/` or contain `//` ' +
      'for the platform.',
    example: '85746065432',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9+/=_-]{1,64}$/, {
    message: 'meetingId must be a meeting id (digits) or a meeting UUID',
  })
  meetingId: string;

  @ApiProperty({
    description: "A file's `id` from the meeting's recording",
    example: 'a1b2c3d4-0001',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9._=+-]{1,128}$/, { message: 'fileId must be a recording file id' })
  fileId: string;
}
