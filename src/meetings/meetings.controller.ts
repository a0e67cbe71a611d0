import { Body, Controller, Delete, Get, Param, Patch, Post, Put, Query, Res } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { RequireScopes } from '../auth/scopes.decorator';
import { ApiUpstreamErrors, passUpstream } from '../common/upstream';
import { ListMeetingsQuery } from './dto/list-meetings.query';
import { MeetingStatusDto } from './dto/meeting-status.dto';
import { CreateMeetingDto, UpdateMeetingDto } from './dto/meeting.dto';
import { MeetingListResponse, MeetingResponse } from './dto/meeting.response';
import { MeetingParams, UserParams } from './dto/path-params.dto';
import { MeetingsService } from './meetings.service';

/** SPEC §6: meetings on the platform, behind this service's own tokens and scopes. */
@ApiTags('meetings')
@Controller('api')
export class MeetingsController {
  constructor(private readonly meetings: MeetingsService) {}

  @Post('users/:userId/meetings')
  @RequireScopes('meetings:write')
  @ApiOperation({
    summary: 'Create a meeting for a user',
    description:
      'Platform call: `POST /users/{userId}/meetings`. The body is validated here first: only ' +
      'the fields below are accepted.',
  })
  @ApiCreatedResponse({
    type: MeetingResponse,
    description: "The platform's answer, as it sent it",
  })
  @ApiUpstreamErrors()
  async create(
    @Param() { userId }: UserParams,
    @Body() body: CreateMeetingDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return passUpstream(res, await this.meetings.create(userId, body));
  }

  @Get('users/:userId/meetings')
  @RequireScopes('meetings:read')
  @ApiOperation({
    summary: "List a user's meetings",
    description: 'Platform call: `GET /users/{userId}/meetings`.',
  })
  @ApiOkResponse({ type: MeetingListResponse })
  @ApiUpstreamErrors()
  async list(
    @Param() { userId }: UserParams,
    @Query() query: ListMeetingsQuery,
    @Res({ passthrough: true }) res: Response,
  ) {
    return passUpstream(res, await this.meetings.list(userId, query));
  }

  @Get('meetings/:meetingId')
  @RequireScopes('meetings:read')
  @ApiOperation({
    summary: 'Get a meeting',
    description: 'Platform call: `GET /meetings/{meetingId}`.',
  })
  @ApiOkResponse({ type: MeetingResponse })
  @ApiUpstreamErrors()
  async get(@Param() { meetingId }: MeetingParams, @Res({ passthrough: true }) res: Response) {
    return passUpstream(res, await this.meetings.get(meetingId));
  }

  @Patch('meetings/:meetingId')
  @RequireScopes('meetings:write')
  @ApiOperation({
    summary: 'Update a meeting',
    description: 'Platform call: `PATCH /meetings/{meetingId}`; the same fields as on create.',
  })
  @ApiNoContentResponse({ description: 'Updated' })
  @ApiUpstreamErrors()
  async update(
    @Param() { meetingId }: MeetingParams,
    @Body() body: UpdateMeetingDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return passUpstream(res, await this.meetings.update(meetingId, body));
  }

  @Delete('meetings/:meetingId')
  @RequireScopes('meetings:write')
  @ApiOperation({
    summary: 'Delete a meeting',
    description: 'Platform call: `DELETE /meetings/{meetingId}`.',
  })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiUpstreamErrors()
  async remove(@Param() { meetingId }: MeetingParams, @Res({ passthrough: true }) res: Response) {
    return passUpstream(res, await this.meetings.remove(meetingId));
  }

  @Put('meetings/:meetingId/status')
  @RequireScopes('meetings:write')
  @ApiOperation({
    summary: 'End a meeting (or recover a deleted one)',
    description: 'Platform call: `PUT /meetings/{meetingId}/status` with `{"action":"end"}`.',
  })
  @ApiNoContentResponse({ description: 'Done' })
  @ApiUpstreamErrors()
  async setStatus(
    @Param() { meetingId }: MeetingParams,
    @Body() body: MeetingStatusDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return passUpstream(res, await this.meetings.setStatus(meetingId, body));
  }
}
