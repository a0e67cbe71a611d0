import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { IsNotMe } from './validators';

export class UserParams {
  @ApiProperty({
    description:
      "The user's id or e-mail address. `me` is refused: the service holds an account-level token.",
    example: 'jchill@example.com',
  })
  @IsString()
  @Length(1, 128)
  @Matches(/^[^\s/\\?#%]+$/, { message: 'userId must be a user id or an e-mail address' })
  @IsNotMe()
  userId: string;
}

export class MeetingParams {
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
}
