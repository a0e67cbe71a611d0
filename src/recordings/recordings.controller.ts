import { Controller, Get, Logger, Param, Req, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiPartialContentResponse,
  ApiProduces,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { RequireScopes } from '../auth/scopes.decorator';
import { ApiUpstreamErrors } from '../common/upstream';
import { platformOperation } from '../platform-api/platform-operations';
import { sendPlatformJson } from '../platform-api/platform-passthrough.service';
import { PlatformRoute } from '../platform-api/platform-route.decorator';
import { RecordingFileParams } from './dto/recording-file.params';
import { RECORDING_PATH_RULES } from './recording-path-rules';
import { FILE_TYPE_QUERY } from './file-type.query';
import { RecordingsService } from './recordings.service';

const FILE_HEADERS = {
  'Content-Type': { schema: { type: 'string', example: 'video/mp4' } },
  'Content-Length': { schema: { type: 'integer', example: 3400000 } },
  'Content-Disposition': {
    schema: { type: 'string', example: 'attachment; filename="a1b2c3d4-0001.mp4"' },
  },
};

/**
 * docs/api.md#platform-passthrough: the platform's two recording lists with `file_type` applied here, and recording
 * files streamed through this service. Every other recording operation is a plain passthrough
 * (src/platform-api).
 */
@Controller('api')
export class RecordingsController {
  private readonly logger = new Logger(RecordingsController.name);

  constructor(private readonly recordings: RecordingsService) {}

  @PlatformRoute(platformOperation('recordingsList'), RECORDING_PATH_RULES)
  @ApiQuery(FILE_TYPE_QUERY)
  async listForUser(@Req() req: Request, @Res() res: Response): Promise<void> {
    sendPlatformJson(res, await this.recordings.listForUser(req));
  }

  @PlatformRoute(platformOperation('recordingGet'), RECORDING_PATH_RULES)
  @ApiQuery(FILE_TYPE_QUERY)
  async forMeeting(@Req() req: Request, @Res() res: Response): Promise<void> {
    sendPlatformJson(res, await this.recordings.forMeeting(req));
  }

  @Get('meetings/:meetingId/recordings/:fileId/download')
  @RequireScopes('recordings:read')
  @ApiTags('recordings')
  @ApiOperation({
    summary: 'Download one recording file',
    description:
      "Looks the file up in the meeting's recording (`GET /meetings/{meetingId}/recordings`), " +
      "then streams its bytes from the platform's download_url with the service's token, " +
      "following redirects only to the platform's own hosts. Nothing is buffered: memory stays " +
      'flat whatever the file size. A `Range` header is passed on (206 with Content-Range).',
  })
  @ApiHeader({ name: 'Range', required: false, description: 'e.g. `bytes=0-1023`' })
  // */*: the file's type is the platform's (a timeline is JSON, a transcript VTT, …).
  @ApiProduces('application/octet-stream', 'video/mp4', 'audio/mp4', 'text/plain', '*/*')
  @ApiOkResponse({
    description:
      'The file; content-type, content-length and content-disposition as the platform sent them',
    schema: { type: 'string', format: 'binary' },
    headers: FILE_HEADERS,
  })
  @ApiPartialContentResponse({
    description: 'The asked range of the file, with Content-Range',
    schema: { type: 'string', format: 'binary' },
    headers: {
      ...FILE_HEADERS,
      'Content-Range': { schema: { type: 'string', example: 'bytes 0-1023/3400000' } },
    },
  })
  @ApiUpstreamErrors()
  async download(
    @Param() { meetingId, fileId }: RecordingFileParams,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const file = await this.recordings.download(meetingId, fileId, req.headers.range);
    res.status(file.status);
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
}
