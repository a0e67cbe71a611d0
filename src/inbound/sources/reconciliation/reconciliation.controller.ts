import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Post,
  Query,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AccountsService } from '../../../accounts/accounts.service';
import { accountUnavailable } from '../../../accounts/account-tokens.service';
import { InstallationStore } from '../../../accounts/installation.store';
import { AuthenticatedClient } from '../../../auth/auth.types';
import { CurrentClient, RequireScopes } from '../../../auth/scopes.decorator';
import { ApiError } from '../../../common/api-error';
import { decodeCursor, toPage } from '../../../common/cursor';
import { ApiErrorResponse } from '../../../common/error-response';
import { DEFAULT_PAGE_LIMIT } from '../../../common/page-query';
import { ApiUuidRefused, UuidParam } from '../../../common/uuid-param';
import { APP_CONFIG } from '../../../config/config.module';
import { AppConfig } from '../../../config/config.types';
import {
  CreateReconciliationDto,
  ListReconciliationsQuery,
  ReconciliationListResponse,
  ReconciliationResponse,
  runResponse,
} from './dto/reconciliation.dto';
import { ReconciliationStore } from './reconciliation.store';

/** The error a cancelled run is left with. */
export const CANCELLED = 'cancelled (DELETE /api/reconciliations/{id})';

const NOT_FOUND = {
  description: 'No run has this id',
  example: { message: 'Reconciliation run not found' },
};

const DAY_MS = 86_400_000;
/** The longest window one run covers: the platform's dashboard reports a month at once. */
const MAX_WINDOW_DAYS = 31;

/**
 * /api/reconciliations (bridge:admin, docs/reconciliation.md): start a run on demand, and see
 * every run (scheduled, after a socket gap, on demand). The runner of a worker process runs it.
 */
@ApiTags('reconciliations')
@Controller('api/reconciliations')
export class ReconciliationController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: ReconciliationStore,
    private readonly accounts: AccountsService,
    private readonly installations: InstallationStore,
  ) {}

  @Post()
  @HttpCode(HttpStatus.ACCEPTED)
  @RequireScopes('bridge:admin')
  @ApiOperation({
    summary: 'Reconcile a window with the platform’s reports',
    description:
      'Queues a run that asks the platform which meetings, webinars, participants and ' +
      'recordings the window had, and creates the platform events the service never received ' +
      '(delivered with `source.via: "reconciliation"`); with `dry_run` it only counts them. ' +
      'With `account_id`, an installed account the caller holds is read with its own token ' +
      'and request budget. Runs of one account go one at a time; poll ' +
      'GET /api/reconciliations/{id}.',
  })
  @ApiAcceptedResponse({ type: ReconciliationResponse, description: 'The run, queued' })
  @ApiErrorResponse(400, {
    description: 'The body is malformed or the window cannot be served; `details` names the field',
    example: {
      message: 'since must be within the last 30 days (RETENTION_DAYS)',
      details: [
        { field: 'since', message: 'since must be within the last 30 days (RETENTION_DAYS)' },
      ],
    },
  })
  @ApiErrorResponse(403, {
    description: '`account_id` names an account the caller does not hold',
    example: { message: 'This client does not hold platform account AbC123xyz' },
  })
  @ApiErrorResponse(409, {
    description: '`account_id` is not installed, or not active',
    example: { message: 'Platform account AbC123xyz is not installed' },
  })
  async create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreateReconciliationDto,
  ): Promise<ReconciliationResponse> {
    const now = Date.now();
    const since = new Date(body.since);
    const until = body.until === undefined ? new Date(now) : new Date(body.until);
    const days = this.config.retention.days;
    const problem = (field: string, message: string) => ApiError.validation([{ field, message }]);
    if (since.getTime() < now - days * DAY_MS)
      throw problem('since', `since must be within the last ${days} days (RETENTION_DAYS)`);
    if (until.getTime() > now) throw problem('until', 'until must not be in the future');
    if (until <= since) throw problem('until', 'until must be later than since');
    if (until.getTime() - since.getTime() > MAX_WINDOW_DAYS * DAY_MS)
      throw problem('until', `until must be at most ${MAX_WINDOW_DAYS} days after since`);
    const accountId = body.account_id ?? null;
    if (accountId !== null) await this.checkAccount(client, accountId);
    return runResponse(
      await this.store.create('manual', since, until, body.dry_run ?? false, accountId),
    );
  }

  /** 403 unless the caller holds the account; 409 unless it is installed and active. */
  private async checkAccount(client: AuthenticatedClient, accountId: string): Promise<void> {
    if (!(await this.accounts.holds(client.clientId, accountId)))
      throw new ApiError(
        HttpStatus.FORBIDDEN,
        `This client does not hold platform account ${accountId}`,
      );
    const found = await this.installations.find(accountId);
    if (found?.status !== 'active')
      throw accountUnavailable(accountId, found?.status ?? 'not_installed');
  }

  @Get()
  @RequireScopes('bridge:admin')
  @ApiOperation({ summary: 'List reconciliation runs, newest first' })
  @ApiOkResponse({ type: ReconciliationListResponse })
  @ApiErrorResponse(400, {
    description: 'A query parameter is malformed; `details` names it',
    example: {
      message: 'cursor is not a valid page cursor',
      details: [{ field: 'cursor', message: 'cursor is not a valid page cursor' }],
    },
  })
  async list(@Query() query: ListReconciliationsQuery): Promise<ReconciliationListResponse> {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    const runs = await this.store.list(decodeCursor(query.cursor), limit);
    return toPage(runs, limit, runResponse);
  }

  @Get(':id')
  @RequireScopes('bridge:admin')
  @ApiOperation({ summary: 'Get one reconciliation run' })
  @ApiParam({ name: 'id', format: 'uuid', description: 'The run' })
  @ApiOkResponse({ type: ReconciliationResponse })
  @ApiUuidRefused()
  @ApiErrorResponse(404, NOT_FOUND)
  async get(@UuidParam('id') id: string): Promise<ReconciliationResponse> {
    const run = await this.store.get(id);
    if (run === null) throw new ApiError(HttpStatus.NOT_FOUND, 'Reconciliation run not found');
    return runResponse(run);
  }

  @Delete(':id')
  @RequireScopes('bridge:admin')
  @ApiOperation({
    summary: 'Cancel a queued or running reconciliation run',
    description:
      'The run ends `failed` at once, its `errors` saying it was cancelled; a running one stops ' +
      'within a second, keeping what it created until then. Its ' +
      '`bridge.reconciliation.completed` goes out as for any run.',
  })
  @ApiParam({ name: 'id', format: 'uuid', description: 'The run' })
  @ApiOkResponse({ type: ReconciliationResponse, description: 'The run, ended' })
  @ApiUuidRefused()
  @ApiErrorResponse(404, NOT_FOUND)
  @ApiErrorResponse(409, {
    description: 'The run has ended already',
    example: { message: 'Reconciliation run has ended already (succeeded)' },
  })
  async cancel(@UuidParam('id') id: string): Promise<ReconciliationResponse> {
    const ended = await this.store.end(id, CANCELLED, false);
    if (ended !== null) return runResponse(ended);
    const run = await this.store.get(id);
    if (run === null) throw new ApiError(HttpStatus.NOT_FOUND, 'Reconciliation run not found');
    throw new ApiError(HttpStatus.CONFLICT, `Reconciliation run has ended already (${run.status})`);
  }
}
