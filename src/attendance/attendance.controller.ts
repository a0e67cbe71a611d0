import { Controller, Get, HttpStatus, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireScopes } from '../auth/scopes.decorator';
import { ApiError } from '../common/api-error';
import { decodeCursor, toPage } from '../common/cursor';
import { ApiErrorResponse } from '../common/error-response';
import { DEFAULT_PAGE_LIMIT } from '../common/page-query';
import { ApiNotificationCallbacks } from '../webhooks/notification-callbacks';
import { ATTENDANCE_EVENT } from '../webhooks/subscription-events';
import { AccountsService } from '../accounts/accounts.service';
import { AttendanceStore } from './attendance.store';
import {
  AttendanceListResponse,
  AttendanceResponse,
  ListAttendanceQuery,
  summaryResponse,
} from './dto/attendance.dto';

/**
 * A platform uuid as it may be asked for: no space or control character, and far shorter than
 * this. Spelled without \S, which JSON Schema tools read differently (docs/api.md).
 */
// eslint-disable-next-line no-control-regex -- control characters are what it refuses
const UUID_PARAM = /^[^\x00-\x20\x7f]{1,256}$/;

/** /api/attendance (attendance:read, docs/attendance.md): the computed attendance of ended occurrences. */
@ApiTags('attendance')
@Controller('api/attendance')
export class AttendanceController {
  constructor(
    private readonly store: AttendanceStore,
    private readonly accounts: AccountsService,
  ) {}

  @Get()
  @RequireScopes('attendance:read')
  @ApiOperation({
    summary: 'List computed attendance, newest end first',
    description:
      'Occurrences whose attendance has been computed, without their participants (GET ' +
      '/api/attendance/{uuid} has them); `since` and `until` bound the occurrence’s end.',
  })
  @ApiOkResponse({ type: AttendanceListResponse })
  @ApiNotificationCallbacks(ATTENDANCE_EVENT)
  @ApiErrorResponse(400, {
    description: 'A query parameter is malformed; `details` names it',
    example: {
      message: 'cursor is not a valid page cursor',
      details: [{ field: 'cursor', message: 'cursor is not a valid page cursor' }],
    },
  })
  async list(
    @Query() query: ListAttendanceQuery,
    @CurrentClient() client: AuthenticatedClient,
  ): Promise<AttendanceListResponse> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.store.list({
      accounts: await this.accounts.heldAccounts(client.clientId),
      since: query.since === undefined ? undefined : new Date(query.since),
      until: query.until === undefined ? undefined : new Date(query.until),
      cursor: decodeCursor(query.cursor),
      limit,
    });
    return toPage(rows, limit, summaryResponse);
  }

  @Get(':uuid')
  @RequireScopes('attendance:read')
  @ApiOperation({
    summary: 'Get the latest attendance of an occurrence',
    description:
      'The latest revision of the occurrence’s attendance, as `meeting.attendance` delivered ' +
      'it, with when it was computed. The uuid as the platform writes it, URL-encoded once ' +
      '(`/` as %2F, `+` as %2B, `=` as %3D).',
  })
  @ApiParam({
    name: 'uuid',
    description: 'The occurrence uuid, URL-encoded',
    example: '4444AAAiAAAAAiAiAiiAii%3D%3D',
    schema: { type: 'string', pattern: UUID_PARAM.source },
  })
  @ApiOkResponse({ type: AttendanceResponse })
  @ApiErrorResponse(400, {
    description: 'The uuid holds a space or control character, or is longer than 256 characters',
    example: {
      message: 'uuid must be 1 to 256 characters without spaces or control characters',
      details: [
        {
          field: 'uuid',
          message: 'uuid must be 1 to 256 characters without spaces or control characters',
        },
      ],
    },
  })
  @ApiErrorResponse(404, {
    description: 'Not computed (yet): the occurrence has not ended and settled, or is unknown',
    example: { message: 'Attendance not found' },
  })
  async get(
    @Param('uuid') uuid: string,
    @CurrentClient() client: AuthenticatedClient,
  ): Promise<AttendanceResponse> {
    if (!UUID_PARAM.test(uuid)) {
      const message = 'uuid must be 1 to 256 characters without spaces or control characters';
      throw ApiError.validation([{ field: 'uuid', message }]);
    }
    const found = await this.store.get(uuid, await this.accounts.heldAccounts(client.clientId));
    if (found === null) throw new ApiError(HttpStatus.NOT_FOUND, 'Attendance not found');
    return {
      ...(found.data as Omit<AttendanceResponse, 'computed_at'>),
      computed_at: found.computedAt.toISOString(),
    };
  }
}
