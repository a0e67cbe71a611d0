import { ApiProperty } from '@nestjs/swagger';
import { IsString, Matches } from 'class-validator';
import { MeetingParams } from '../../meetings/dto/path-params.dto';

export class RecordingFileParams extends MeetingParams {
  @ApiProperty({
    description: "A file's `id` from the meeting's recording",
    example: 'a1b2c3d4-0001',
  })
  @IsString()
  @Matches(/^[A-Za-z0-9._=+-]{1,128}$/, { message: 'fileId must be a recording file id' })
  fileId: string;
}
