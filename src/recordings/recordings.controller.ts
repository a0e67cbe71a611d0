import { Controller, Delete, Get, Logger, Param, Query, Req, Res } from '@nestjs/common';
import {
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { RequireScopes } from '../auth/scopes.decorator';
import { ApiUpstreamErrors, passUpstream } from '../common/upstream';
import { MeetingParams, UserParams } from '../meetings/dto/path-params.dto';
import { RecordingFileParams } from './dto/recording-file.params';
import { MeetingRecordingResponse, RecordingListResponse } from './dto/recording.response';
import {
  DeleteRecordingsQuery,
  FileTypeQuery,
  ListUserRecordingsQuery,
} from './dto/recordings.query';
import { RecordingsService } from './recordings.service';

/** SPEC §6: cloud recordings on the platform, and their files streamed through this service. */
@ApiTags('recordings')
@Controller('api')
export class RecordingsController {
  private readonly logger = new Logger(RecordingsController.name);

  constructor(private readonly recordings: RecordingsService) {}

  @Get('users/:userId/recordings')
  @RequireScopes('recordings:read')
  @ApiOperation({
    summary: "List a user's cloud recordings",
    description:
      'Platform call: `GET /users/{userId}/recordings`; `file_type` is applied here to the answer.',
  })
  @ApiOkResponse({ type: RecordingListResponse })
  @ApiUpstreamErrors()
  async listForUser(
    @Param() { userId }: UserParams,
    @Query() query: ListUserRecordingsQuery,
    @Res({ passthrough: true }) res: Response,
  ) {
    return passUpstream(res, await this.recordings.listForUser(userId, query));
  }

  @Get('meetings/:meetingId/recordings')
  @RequireScopes('recordings:read')
  @ApiOperation({
    summary: "Get a meeting's cloud recording and its files",
    description:
      'Platform call: `GET /meetings/{meetingId}/recordings`; `file_type` is applied here.',
  })
  @ApiOkResponse({ type: MeetingRecordingResponse })
  @ApiUpstreamErrors()
  forMeeting(@Param() { meetingId }: MeetingParams, @Query() { file_type }: FileTypeQuery) {
    return this.recordings.forMeeting(meetingId, file_type);
  }

  @Get('meetings/:meetingId/recordings/:fileId/download')
  @RequireScopes('recordings:read')
  @ApiOperation({
    summary: 'Download one recording file',
    description:
      "Looks the file up in the meeting's recording (`GET /meetings/{meetingId}/recordings`), " +
      "then streams its bytes from the platform's download_url with the service's token. " +
      'Nothing is buffered: memory stays flat whatever the file size.',
  })
  @ApiProduces('application/octet-stream', 'video/mp4', 'audio/mp4', 'text/plain')
  @ApiOkResponse({
    description:
      'The file; content-type, content-length and content-disposition as the platform sent them',
    schema: { type: 'string', format: 'binary' },
    headers: {
      'Content-Type': { schema: { type: 'string', example: 'video/mp4' } },
      'Content-Length': { schema: { type: 'integer', example: 3400000 } },
      'Content-Disposition': {
        schema: { type: 'string', example: 'attachment; filename="a1b2c3d4-0001.mp4"' },
      },
    },
  })
  @ApiUpstreamErrors()
  async download(
    @Param() { meetingId, fileId }: RecordingFileParams,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.recordings.download(meetingId, fileId);
    res.status(200);
    for (const [name, value] of Object.entries(file.headers)) res.setHeader(name, value);
    res.setHeader('cache-control', 'private, no-store');
    if (req.method === 'HEAD') {
      // Express answers HEAD with the GET route: the headers, without pulling the file.
      file.body.destroy();
      res.end();
      return;
    }
    try {
      await pipeline(file.body, res);
    } catch (error) {
      // The status line is gone already: all that is left is to cut the response short, which
      // pipeline has done, so the client sees a truncated body rather than a wrong one.
      this.logger.warn(
        `download of file ${fileId} of meeting ${meetingId} ended early: ${(error as Error).message}`,
      );
    }
  }

  @Delete('meetings/:meetingId/recordings')
  @RequireScopes('recordings:write')
  @ApiOperation({
    summary: "Delete a meeting's cloud recordings",
    description:
      'Platform call: `DELETE /meetings/{meetingId}/recordings` (`action` trash or delete).',
  })
  @ApiNoContentResponse({ description: 'Deleted (or moved to the trash)' })
  @ApiUpstreamErrors()
  async remove(
    @Param() { meetingId }: MeetingParams,
    @Query() query: DeleteRecordingsQuery,
    @Res({ passthrough: true }) res: Response,
  ) {
    return passUpstream(res, await this.recordings.remove(meetingId, query));
  }
}
