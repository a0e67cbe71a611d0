import { applyDecorators } from '@nestjs/common';
import { ApiDefaultResponse, HeadersObject, getSchemaPath } from '@nestjs/swagger';
import { ApiErrorResponse, ErrorExample, ErrorResponse, errorBody } from './error-response';

const RATE_LIMITED =
  'You have reached the maximum per-second rate limit for this API. Try again later.';

const UNPROCESSABLE = 'Cannot access meeting information.';

const USER_ME =
  'userId cannot be "me": this service calls the platform with an account-level token, ' +
  "which has no user of its own; give the user's id or e-mail address";

const UPSTREAM_ERRORS: (ErrorExample & {
  status: number;
  description: string;
  headers?: HeadersObject;
})[] = [
  {
    status: 400,
    description:
      'A path parameter, query parameter or body field is invalid (nothing is sent to the ' +
      'platform), or the platform refused the request (then with `upstream`)',
    message: USER_ME,
    details: [{ field: 'userId', message: USER_ME }],
  },
  {
    status: 404,
    description: 'The platform does not know the user, meeting or recording',
    message: 'Meeting does not exist: 85746065432.',
    upstream: { status: 404, code: 3001, message: 'Meeting does not exist: 85746065432.' },
  },
  {
    status: 429,
    description:
      "The platform's rate limit: Retry-After (seconds) and the platform's X-RateLimit-* " +
      'headers are passed on',
    message: RATE_LIMITED,
    upstream: { status: 429, code: 429, message: RATE_LIMITED },
    headers: {
      'Retry-After': { description: 'Seconds to wait', schema: { type: 'string', example: '1' } },
      'X-RateLimit-Category': { schema: { type: 'string', example: 'Light' } },
      'X-RateLimit-Type': { schema: { type: 'string', example: 'QPS' } },
      'X-RateLimit-Limit': { schema: { type: 'string', example: '30' } },
      'X-RateLimit-Remaining': { schema: { type: 'string', example: '0' } },
    },
  },
  {
    status: 502,
    description:
      "The platform could not be reached, sent an invalid answer, or refused the service's " +
      'own credentials or token',
    message: 'The meeting platform could not be reached (ECONNREFUSED)',
  },
  {
    status: 503,
    description: 'The platform credentials are not configured',
    message:
      'The meeting platform is not configured: set ZOOM_ACCOUNT_ID, ZOOM_CLIENT_ID, ZOOM_CLIENT_SECRET',
  },
  {
    status: 504,
    description: 'The platform did not answer within ZOOM_TIMEOUT_MS',
    message: 'The meeting platform did not answer within 15000 ms',
  },
];

/**
 * Documents the error answers of a platform passthrough route (docs/api.md#platform-passthrough, docs/api.md#errors). Any other error
 * status the platform answers with is passed on the same way, with `upstream`.
 */
export function ApiUpstreamErrors(): MethodDecorator {
  return applyDecorators(
    ...UPSTREAM_ERRORS.map(({ status, description, headers, ...example }) =>
      ApiErrorResponse(status, { description, headers, example }),
    ),
    // docs/api.md: whatever other error status the platform answers (409, 422, 500, …) is passed
    // on with that status, in the one error shape, the platform's own code and message in
    // `upstream`.
    ApiDefaultResponse({
      description:
        'Any other error status the platform answers with (409, 422, 500, …), passed on as it ' +
        'is, in the one error shape with the platform’s `code` and `message` in `upstream`',
      content: {
        'application/json': {
          schema: { $ref: getSchemaPath(ErrorResponse) },
          example: errorBody(422, UNPROCESSABLE, {
            upstream: { status: 422, code: 3000, message: UNPROCESSABLE },
          }),
        },
      },
    }),
  );
}
