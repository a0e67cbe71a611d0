import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireScopes } from '../auth/scopes.decorator';
import { ApiUpstreamErrors, passUpstream } from '../common/upstream';
import { ListUsersQuery } from './dto/list-users.query';
import { UserListResponse } from './dto/meeting.response';
import { MeetingsService } from './meetings.service';

@ApiTags('users')
@Controller('api/users')
export class UsersController {
  constructor(private readonly meetings: MeetingsService) {}

  @Get()
  @RequireScopes('users:read')
  @ApiOperation({
    summary: "List the account's users",
    description: 'Platform call: `GET /users`.',
  })
  @ApiOkResponse({ type: UserListResponse })
  @ApiUpstreamErrors()
  async list(@Query() query: ListUsersQuery, @Res({ passthrough: true }) res: Response) {
    return passUpstream(res, await this.meetings.listUsers(query));
  }
}
