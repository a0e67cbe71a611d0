import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { ID_OR_UUID } from '../../platform-api/schema-leniency';

/** The rules below are the document's too (pattern), so a value it admits is one taken here. */
const MEETING_ID = new RegExp(ID_OR_UUID);
const FILE_ID = /^[A-Za-z0-9._=+-]{1,128}$/;

export class RecordingFileParams {
  @ApiProperty({
    description:
      "The meeting id (digits) or the UUID of one meeting instance. Encode a UUID's `/` as " +
      '`%2F` in this path; the service double-encodes UUIDs that begin with `/` or contain `//` ' +
      'for the platform.',
    example: '85746065432',
    pattern: MEETING_ID.source,
  })
  @IsString()
  @Matches(MEETING_ID, {
    message: 'meetingId must be a meeting id (digits) or a meeting UUID',
  })
  meetingId: string;

  @ApiProperty({
    description: "A file's `id` from the meeting's recording",
    example: 'a1b2c3d4-0001',
    pattern: FILE_ID.source,
  })
  @IsString()
  @Matches(FILE_ID, { message: 'fileId must be a recording file id' })
  fileId: string;
}
