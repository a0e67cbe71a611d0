import { Controller, Delete, Get, HttpCode, HttpStatus, Param, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireAnyScope, RequireScopes } from '../auth/scopes.decorator';
import { ApiError } from '../common/api-error';
import { ApiErrorResponse } from '../common/error-response';
import { AccountsService } from './accounts.service';
import { AccountListResponse, InstallResponse, accountResponse } from './dto/accounts.dto';
import { InstallFlow } from './install-flow.service';

/** A platform account id as the platform writes them (docs/accounts.md). */
const ACCOUNT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** /api/platform (docs/accounts.md): installing, listing and removing platform accounts. */
@ApiTags('accounts')
@Controller('api/platform')
export class AccountsController {
  constructor(
    private readonly flow: InstallFlow,
    private readonly accounts: AccountsService,
  ) {}

  @Post('installs')
  @HttpCode(HttpStatus.CREATED)
  @RequireScopes('accounts:write')
  @ApiOperation({
    summary: 'Start installing a platform account',
    description:
      'An authorize URL of the platform OAuth app (ZOOM_APP_CLIENT_ID) with a single-use state ' +
      'bound to this client and a PKCE S256 challenge. The account installed through it is ' +
      "this client's: its events, passthrough and data (docs/accounts.md).",
  })
  @ApiCreatedResponse({ type: InstallResponse })
  @ApiErrorResponse(503, {
    description: 'The platform OAuth app is not configured',
    example: {
      message:
        'Installing platform accounts is not configured: set ZOOM_APP_CLIENT_ID, ' +
        'ZOOM_APP_CLIENT_SECRET, ZOOM_APP_REDIRECT_URL',
    },
  })
  async install(@CurrentClient() client: AuthenticatedClient): Promise<InstallResponse> {
    const { installUrl, expiresAt } = await this.flow.start(client.clientId);
    return { install_url: installUrl, expires_at: expiresAt.toISOString() };
  }

  @Get('accounts')
  @RequireAnyScope('accounts:write', 'bridge:admin')
  @ApiOperation({
    summary: 'List installed platform accounts',
    description:
      'Needs `accounts:write` or `bridge:admin`. The installations this client holds (those ' +
      'it installed and those AUTH_CLIENTS lists for it); every one with `bridge:admin`. ' +
      'Never a token.',
  })
  @ApiOkResponse({ type: AccountListResponse })
  async list(@CurrentClient() client: AuthenticatedClient): Promise<AccountListResponse> {
    const admin = client.scopes.includes('bridge:admin');
    return { data: (await this.accounts.list(client.clientId, admin)).map(accountResponse) };
  }

  @Delete('accounts/:accountId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequireScopes('accounts:write')
  @ApiOperation({
    summary: 'Remove a platform account this client installed',
    description:
      'Revokes its token at the platform, deletes its tokens at once (status `revoked`), ' +
      'sends `bridge.account.deauthorized`, and deletes its stored events, deliveries and ' +
      'inbound events within 10 minutes. Webhooks stay.',
  })
  @ApiParam({
    name: 'accountId',
    description: 'The platform account',
    schema: { type: 'string', pattern: ACCOUNT_ID.source },
  })
  @ApiErrorResponse(400, {
    description: 'The account id is not one the platform could have written',
    example: { message: 'accountId must be 1 to 64 letters, digits, _ or -' },
  })
  @ApiNoContentResponse({ description: 'Removed' })
  @ApiErrorResponse(404, {
    description: 'This client has not installed that account (or it is removed already)',
    example: { message: 'Platform account AAAA is not installed by this client' },
  })
  async remove(
    @CurrentClient() client: AuthenticatedClient,
    @Param('accountId') accountId: string,
  ): Promise<void> {
    if (!ACCOUNT_ID.test(accountId)) {
      const message = 'accountId must be 1 to 64 letters, digits, _ or -';
      throw ApiError.validation([{ field: 'accountId', message }]);
    }
    await this.accounts.remove(client.clientId, accountId);
  }
}
