import { Body, Controller, Headers, HttpCode, Ip, Post, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiErrorResponse } from '../common/error-response';
import { NOT_TOKEN_FORM } from '../common/request-body';
import { ADDRESS_FAILURE_BUDGET, FAILURE_WINDOW_MS, MAX_FAILURES } from './auth-failure-limiter';
import { ClientCredentialsService, TokenGrant } from './client-credentials.service';

class TokenResponse implements TokenGrant {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' })
  access_token: string;
  @ApiProperty({ example: 'bearer' })
  token_type: 'bearer';
  @ApiProperty({ example: 3600 })
  expires_in: number;
  @ApiProperty({ example: 'webhooks:read webhooks:write' })
  scope: string;
}

@ApiTags('auth')
@Controller('oauth')
export class AuthController {
  constructor(private readonly credentials: ClientCredentialsService) {}

  @Post('token')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Get an access token (OAuth 2.0 client credentials)',
    description:
      'Authenticate with HTTP Basic (client_id:client_secret) or client_id and client_secret ' +
      'in the form body. Errors follow RFC 6749 §5.2: `error` is the OAuth error code.',
  })
  // RFC 6749 §4.4.2: the form body, which generated clients then send as a form.
  @ApiConsumes('application/x-www-form-urlencoded')
  @ApiBody({
    schema: {
      type: 'object',
      required: ['grant_type'],
      properties: {
        grant_type: { type: 'string', enum: ['client_credentials'] },
        scope: { type: 'string', description: 'space-separated subset of the client scopes' },
        client_id: { type: 'string' },
        client_secret: { type: 'string' },
      },
    },
  })
  @ApiOkResponse({ type: TokenResponse })
  @ApiErrorResponse(400, {
    description: 'invalid_request, unsupported_grant_type, invalid_scope',
    examples: {
      invalid_request: { oauthError: 'invalid_request', message: 'grant_type is required' },
      unsupported_grant_type: {
        oauthError: 'unsupported_grant_type',
        message: 'Only grant_type=client_credentials is supported',
      },
      invalid_scope: {
        oauthError: 'invalid_scope',
        message: 'Client "reader" lacks scope meetings:write',
      },
    },
  })
  @ApiErrorResponse(415, {
    description:
      'The body is neither a form (application/x-www-form-urlencoded) nor JSON, or has no ' +
      'Content-Type',
    example: { message: `${NOT_TOKEN_FORM} (got "text/plain")` },
  })
  @ApiErrorResponse(401, {
    description: 'invalid_client: the client id or secret is missing or wrong',
    headers: {
      'WWW-Authenticate': {
        schema: { type: 'string', example: 'Basic realm="meeting-event-bridge"' },
      },
    },
    example: { oauthError: 'invalid_client', message: 'Client authentication failed' },
  })
  @ApiErrorResponse(429, {
    description:
      `More than ${MAX_FAILURES - 1} failed authentications from this address for this ` +
      `client_id, or ${ADDRESS_FAILURE_BUDGET - 1} for any client ids, within ` +
      `${FAILURE_WINDOW_MS / 1000} s; see the Retry-After header (seconds)`,
    headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } },
    example: { message: 'Too many failed authentication attempts; retry after 42 s' },
  })
  token(
    @Headers('authorization') authorization: string | undefined,
    @Body() body: unknown,
    @Ip() ip: string,
    @Res({ passthrough: true }) res: Response,
  ): TokenGrant {
    res.setHeader('cache-control', 'no-store');
    res.setHeader('pragma', 'no-cache');
    return this.credentials.grant({ authorization, form: body, ip });
  }
}
