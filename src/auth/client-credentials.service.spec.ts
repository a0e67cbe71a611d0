import { HttpStatus } from '@nestjs/common';
import { JwtService } from '@nestjs/jwt';
import { ApiError } from '../common/api-error';
import { SCOPES } from '../config/config.types';
import { loadConfig } from '../config/load-config';
import { ApiClientsService } from './api-clients.service';
import { AuthFailureLimiter, MAX_FAILURES } from './auth-failure-limiter';
import { CredentialsRequest, ClientCredentialsService } from './client-credentials.service';
import { TokenService } from './token.service';

const WRITER = { client_id: 'writer', client_secret: 'writer-secret-0123456789' };
const READER = { client_id: 'reader', client_secret: 'reader-secret-0123456789' };
const IP = '192.0.2.10';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

/** The error `call` throws, so a test can assert its status, OAuth code and message. */
function errorOf(call: () => unknown): ApiError {
  try {
    call();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected an ApiError');
}

describe('ClientCredentialsService', () => {
  let service: ClientCredentialsService;
  let tokens: TokenService;

  beforeEach(() => {
    const config = loadConfig({
      AUTH_CLIENTS: JSON.stringify([
        { ...WRITER, scopes: 'webhooks:read webhooks:write' },
        { ...READER, scopes: 'webhooks:read' },
      ]),
    });
    tokens = new TokenService(new JwtService(), config);
    service = new ClientCredentialsService(
      new ApiClientsService(config),
      tokens,
      new AuthFailureLimiter(),
    );
  });

  const grant = (form: Record<string, string>, authorization?: string, ip = IP) =>
    service.grant({ authorization, form, ip });
  const asWriter = basic(WRITER.client_id, WRITER.client_secret);

  describe('authenticate', () => {
    it('takes the client from HTTP Basic, or else from client_id and client_secret in the form', () => {
      expect(service.authenticate({ authorization: asWriter, ip: IP }).client?.clientId).toBe(
        'writer',
      );
      const form = { client_id: READER.client_id, client_secret: READER.client_secret };
      expect(
        service.authenticate({ authorization: undefined, form, ip: IP }).client?.clientId,
      ).toBe('reader');
      // Basic wins when both are there.
      expect(service.authenticate({ authorization: asWriter, form, ip: IP }).client?.clientId).toBe(
        'writer',
      );
    });

    it.each<[string, CredentialsRequest]>([
      ['nothing', { authorization: undefined, ip: IP }],
      ['a bearer header', { authorization: 'Bearer abc', ip: IP }],
      [
        'a client_id without secret',
        { authorization: undefined, form: { client_id: 'x' }, ip: IP },
      ],
      ['a body that is not an object', { authorization: undefined, form: 'client_id=x', ip: IP }],
    ])('reports credentials missing for %s, and counts no failure', (_, request) => {
      for (let i = 0; i < MAX_FAILURES + 1; i++) {
        expect(service.authenticate(request)).toEqual({ client: null, failure: 'missing' });
      }
      expect(service.authenticate({ authorization: asWriter, ip: IP }).client).not.toBeNull();
    });

    it('rejects a wrong secret, an unknown client and an empty secret', () => {
      for (const authorization of [
        basic('writer', 'wrong-secret-0123456789'),
        basic('nobody', WRITER.client_secret),
        basic('writer', ''),
      ]) {
        expect(service.authenticate({ authorization, ip: IP })).toEqual({
          client: null,
          failure: 'rejected',
        });
      }
    });

    it('blocks a caller after MAX_FAILURES wrong secrets, even when its next secret is right', () => {
      for (let i = 0; i < MAX_FAILURES; i++) {
        service.authenticate({ authorization: basic('writer', `guess-${i}`), ip: IP });
      }
      const blocked = errorOf(() => service.authenticate({ authorization: asWriter, ip: IP }));
      expect(blocked.getStatus()).toBe(HttpStatus.TOO_MANY_REQUESTS);
      expect(blocked.extra.headers?.['retry-after']).toBe('60');
      // The same client from elsewhere is not blocked.
      expect(service.authenticate({ authorization: asWriter, ip: '192.0.2.11' }).client).not.toBe(
        null,
      );
    });
  });

  describe('grant', () => {
    it('issues a bearer token with every scope of the client', () => {
      const granted = grant({ grant_type: 'client_credentials' }, asWriter);
      expect(granted).toEqual({
        access_token: expect.any(String),
        token_type: 'bearer',
        expires_in: 3600,
        scope: 'webhooks:read webhooks:write',
      });
      expect(tokens.verify(granted.access_token)).toEqual({
        clientId: 'writer',
        scopes: ['webhooks:read', 'webhooks:write'],
      });
    });

    it('narrows to the requested scopes, each once', () => {
      const granted = grant(
        { grant_type: 'client_credentials', scope: ' webhooks:read   webhooks:read ' },
        asWriter,
      );
      expect(granted.scope).toBe('webhooks:read');
      expect(tokens.verify(granted.access_token)?.scopes).toEqual(['webhooks:read']);
    });

    it.each<[string, Record<string, string>, string, string]>([
      ['a missing grant_type', {}, 'invalid_request', 'grant_type is required'],
      [
        'another grant type',
        { grant_type: 'password' },
        'unsupported_grant_type',
        'Only grant_type=client_credentials is supported',
      ],
      [
        'a scope that does not exist',
        { grant_type: 'client_credentials', scope: 'webhooks:read admin' },
        'invalid_scope',
        `Scope "admin" does not exist; the scopes are ${SCOPES.join(', ')}`,
      ],
      [
        'two scopes that do not exist',
        { grant_type: 'client_credentials', scope: 'admin root' },
        'invalid_scope',
        `Scopes "admin", "root" do not exist; the scopes are ${SCOPES.join(', ')}`,
      ],
      [
        'a scope the client lacks',
        { grant_type: 'client_credentials', scope: 'webhooks:read queues:admin' },
        'invalid_scope',
        'Client "writer" lacks scope queues:admin',
      ],
      [
        'two scopes the client lacks',
        { grant_type: 'client_credentials', scope: 'meetings:read queues:admin' },
        'invalid_scope',
        'Client "writer" lacks scopes meetings:read, queues:admin',
      ],
    ])('answers 400 for %s', (_, form, code, message) => {
      const error = errorOf(() => grant(form, asWriter));
      expect(error.getStatus()).toBe(HttpStatus.BAD_REQUEST);
      expect(error.extra.oauthError).toBe(code);
      expect(error.message).toBe(message);
    });

    it('echoes unknown scope names cut short, and at most five of them', () => {
      const scope = ['x'.repeat(100), 'b', 'c', 'd', 'e', 'f', 'g'].join(' ');
      const error = errorOf(() => grant({ grant_type: 'client_credentials', scope }, asWriter));
      expect(error.message).toMatch(
        new RegExp(`^Scopes "${'x'.repeat(40)}…", "b", "c", "d", "e" and 2 more do not exist`),
      );
    });

    it.each<[string, string | undefined, Record<string, string>, string]>([
      ['no credentials', undefined, {}, 'Client credentials are required'],
      [
        'a wrong secret',
        basic('writer', 'wrong-secret-0123456789'),
        {},
        'Client authentication failed',
      ],
      [
        'a wrong secret in the form',
        undefined,
        { client_id: 'writer', client_secret: 'nope' },
        'Client authentication failed',
      ],
    ])(
      'answers 401 invalid_client with a Basic challenge for %s',
      (_, authorization, form, message) => {
        const error = errorOf(() =>
          grant({ grant_type: 'client_credentials', ...form }, authorization),
        );
        expect(error.getStatus()).toBe(HttpStatus.UNAUTHORIZED);
        expect(error.extra.oauthError).toBe('invalid_client');
        expect(error.message).toBe(message);
        expect(error.extra.headers?.['www-authenticate']).toMatch(/^Basic realm=/);
      },
    );

    it('checks the scopes only for an authenticated client (a stranger learns none)', () => {
      const error = errorOf(() =>
        grant({ grant_type: 'client_credentials', scope: 'admin' }, basic('nobody', 'guess')),
      );
      expect(error.extra.oauthError).toBe('invalid_client');
    });
  });
});
