import { Body, Controller, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedClient } from '../auth/auth.types';
import { CurrentClient, RequireScopes } from '../auth/scopes.decorator';
import { ApiErrorResponse } from '../common/error-response';
import { CreatePortalLinkDto, PORTAL_TTL, PortalLinkResponse } from './dto/create-portal-link.dto';
import { PortalLinksService } from './portal-links.service';

const TTL_MESSAGE = `ttl_seconds must be an integer from ${PORTAL_TTL.min} to ${PORTAL_TTL.max}`;

@ApiTags('console')
@Controller('api/portal-links')
export class PortalLinksController {
  constructor(private readonly links: PortalLinksService) {}

  @Post()
  @RequireScopes('webhooks:write')
  @ApiOperation({
    summary: 'Create a portal link: the web console without the client secret',
    description:
      'Returns a /console URL that signs a person in as the calling client for `ttl_seconds`, ' +
      'with at most the scopes webhooks:read and webhooks:write (those of them the caller ' +
      'holds). Hand it to a colleague or a customer; anyone holding it acts as the client ' +
      'until `expires_at`, so send it as you would a password.',
  })
  @ApiCreatedResponse({ type: PortalLinkResponse, description: 'The link and when it expires' })
  @ApiErrorResponse(400, {
    description: 'A field is unknown or `ttl_seconds` is out of range; `details` names it',
    example: { message: TTL_MESSAGE, details: [{ field: 'ttl_seconds', message: TTL_MESSAGE }] },
  })
  @ApiErrorResponse(409, {
    description: 'The console is turned off (CONSOLE_ENABLED=false)',
    example: {
      message:
        'The console is turned off (CONSOLE_ENABLED=false), so a portal link would lead nowhere',
    },
  })
  create(
    @CurrentClient() client: AuthenticatedClient,
    @Body() body: CreatePortalLinkDto,
  ): PortalLinkResponse {
    return this.links.create(client, body.ttl_seconds);
  }
}
