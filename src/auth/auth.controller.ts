import { Body, Controller, Headers, HttpCode, HttpStatus, Post, Res } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBody,
  ApiConsumes,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError } from '../common/api-error';
import { ErrorResponse } from '../common/error-response';
import { SCOPES, Scope } from '../config/config.types';
import { ApiClientsService } from './api-clients.service';
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

function basicCredentials(header: string | undefined): [string, string] | null {
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return null;
  // RFC 6749 §2.3.1: both parts are form-urlencoded before base64.
  const part = (s: string) => {
    try {
      return decodeURIComponent(s.replace(/\+/g, ' '));
    } catch {
      return s;
    }
  };
  return [part(decoded.slice(0, colon)), part(decoded.slice(colon + 1))];
}

@ApiTags('auth')
@Controller('oauth')
export class AuthController {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly tokens: TokenService,
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
  @ApiBadRequestResponse({
    description: 'invalid_request, unsupported_grant_type, invalid_scope',
    type: ErrorResponse,
  })
  @ApiUnauthorizedResponse({ description: 'invalid_client', type: ErrorResponse })
  token(
    @Headers('authorization') authorization: string | undefined,
    @Body() body: Record<string, unknown>,
    @Res({ passthrough: true }) res: Response,
  ): TokenResponse {
    res.setHeader('cache-control', 'no-store');
    res.setHeader('pragma', 'no-cache');
    const form = typeof body === 'object' && body !== null ? body : {};
    const field = (name: string) =>
      typeof form[name] === 'string' ? (form[name] as string) : undefined;

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
    const fromHeader = basicCredentials(authorization);
    const clientId = fromHeader?.[0] ?? field('client_id');
    const clientSecret = fromHeader?.[1] ?? field('client_secret');
    if (!clientId || clientSecret === undefined) {
      throw oauthError(
        HttpStatus.UNAUTHORIZED,
        'invalid_client',
        'Client credentials are required',
        true,
      );
    }
    const client = this.clients.verify(clientId, clientSecret);
    if (!client) {
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
