import { Body, Controller, Headers, HttpCode, HttpStatus, Ip, Post, Res } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError } from '../common/api-error';
import { ApiErrorResponse } from '../common/error-response';
import { SCOPES, Scope } from '../config/config.types';
import { ApiClientsService } from './api-clients.service';
import { basicCredentials } from './basic-credentials';
import { AuthFailureLimiter, FAILURE_WINDOW_MS, MAX_FAILURES } from './auth-failure-limiter';
import { TokenService } from './token.service';

class TokenResponse {
  @ApiProperty({ example: 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9…' })
  access_token: string;
  @ApiProperty({ example: 'bearer' })
  token_type: 'bearer';
  @ApiProperty({ example: 3600 })
  expires_in: number;
  @ApiProperty({ example: 'webhooks:read webhooks:write' })
  scope: string;
}

const oauthError = (status: HttpStatus, code: string, description: string, basic = false) =>
  new ApiError(status, description, {
    oauthError: code,
    headers: basic ? { 'www-authenticate': 'Basic realm="meeting-event-bridge"' } : {},
  });

@ApiTags('auth')
@Controller('oauth')
export class AuthController {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly tokens: TokenService,
    private readonly failures: AuthFailureLimiter,
  ) {}

  @Post('token')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Get an access token (OAuth 2.0 client credentials)',
    description:
      'Authenticate with HTTP Basic (client_id:client_secret) or client_id and client_secret ' +
      'in the form body. Errors follow RFC 6749 §5.2: `error` is the OAuth error code.',
  })
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
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
        message: 'Scope not allowed for this client: meetings:write',
      },
    },
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
      `client_id within ${FAILURE_WINDOW_MS / 1000} s; see the Retry-After header (seconds)`,
    headers: { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer' } } },
    example: { message: 'Too many failed authentication attempts; retry after 42 s' },
  })
  token(
    @Headers('authorization') authorization: string | undefined,
    @Body() body: Record<string, unknown>,
    @Ip() ip: string,
    @Res({ passthrough: true }) res: Response,
  ): TokenResponse {
    res.setHeader('cache-control', 'no-store');
    res.setHeader('pragma', 'no-cache');
    const form = typeof body === 'object' && body !== null ? body : {};
    const field = (name: string) =>
      typeof form[name] === 'string' ? (form[name] as string) : undefined;

    const candidates: [string | undefined, string | undefined][] = basicCredentials(
      authorization,
    ) ?? [[field('client_id'), field('client_secret')]];
    const clientId = candidates[0][0];

    // Checked before anything else, so that a blocked caller learns nothing, not even
    // whether its next guess would have been right.
    const attemptKey = `${clientId ?? ''}\n${ip}`;
    this.failures.assertMayTry(attemptKey);

    const grantType = field('grant_type');
    if (!grantType) {
      throw oauthError(HttpStatus.BAD_REQUEST, 'invalid_request', 'grant_type is required');
    }
    if (grantType !== 'client_credentials') {
      throw oauthError(
        HttpStatus.BAD_REQUEST,
        'unsupported_grant_type',
        'Only grant_type=client_credentials is supported',
      );
    }
    if (!clientId || candidates[0][1] === undefined) {
      this.failures.recordFailure(attemptKey);
      throw oauthError(
        HttpStatus.UNAUTHORIZED,
        'invalid_client',
        'Client credentials are required',
        true,
      );
    }
    const client = this.clients.verifyAny(candidates);
    if (!client) {
      this.failures.recordFailure(attemptKey);
      throw oauthError(
        HttpStatus.UNAUTHORIZED,
        'invalid_client',
        'Client authentication failed',
        true,
      );
    }

    let scopes: Scope[] = client.scopes;
    const requested = field('scope')?.split(/\s+/).filter(Boolean);
    if (requested && requested.length > 0) {
      const refused = requested.filter(
        (s) => !(SCOPES as readonly string[]).includes(s) || !client.scopes.includes(s as Scope),
      );
      if (refused.length > 0) {
        throw oauthError(
          HttpStatus.BAD_REQUEST,
          'invalid_scope',
          `Scope not allowed for this client: ${refused.join(', ')}`,
        );
      }
      scopes = [...new Set(requested)] as Scope[];
    }
    const { token, expiresIn } = this.tokens.issue(client.clientId, scopes);
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: expiresIn,
      scope: scopes.join(' '),
    };
  }
}
