import { applyDecorators } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  HeadersObject,
  getSchemaPath,
} from '@nestjs/swagger';
import { STATUS_CODES } from 'node:http';

export class ErrorDetail {
  @ApiProperty({ example: 'url' })
  field: string;

  @ApiProperty({ example: 'url must be an absolute http or https URL' })
  message: string;
}

export class UpstreamError {
  @ApiProperty({ example: 404 })
  status: number;

  @ApiProperty({
    type: 'integer',
    example: 3001,
    nullable: true,
    description: 'The platform’s error code; null when its answer had no numeric one',
  })
  code: number | null;

  @ApiProperty({
    type: String,
    example: 'Meeting does not exist: 123.',
    nullable: true,
    description: 'The platform’s error message; null when its answer had none',
  })
  message: string | null;
}

/** The one error shape of docs/api.md#errors. */
export class ErrorResponse {
  @ApiProperty({ example: 400 })
  statusCode: number;

  @ApiProperty({ example: 'Bad Request' })
  error: string;

  @ApiProperty({ example: 'Validation failed' })
  message: string;

  @ApiPropertyOptional({ type: [ErrorDetail] })
  details?: ErrorDetail[];

  @ApiPropertyOptional({ type: UpstreamError })
  upstream?: UpstreamError;

  @ApiPropertyOptional({ description: 'RFC 6749 error description (token endpoint only)' })
  error_description?: string;
}

/** What an error says beyond its status and message. */
export interface ErrorExtras {
  details?: ErrorDetail[];
  upstream?: UpstreamError;
  /** RFC 6749 error code; replaces `error` and adds `error_description` (token endpoint). */
  oauthError?: string;
}

/**
 * The body of an error answer. The exception filter writes every error with it and the
 * Swagger examples are built with it, so an example cannot drift from what is answered.
 */
export function errorBody(
  statusCode: number,
  message: string,
  extra: ErrorExtras = {},
): ErrorResponse {
  const body: ErrorResponse = {
    statusCode,
    error: STATUS_CODES[statusCode] ?? 'Error',
    message,
  };
  if (extra.details) body.details = extra.details;
  if (extra.upstream) body.upstream = extra.upstream;
  if (extra.oauthError) {
    body.error = extra.oauthError;
    body.error_description = message;
  }
  return body;
}

export type ErrorExample = { message: string } & ErrorExtras;

export type ApiErrorOptions = {
  description: string;
  headers?: HeadersObject;
} & (
  | { example: ErrorExample }
  /** Several cases, offered by name in Swagger UI's example menu. */
  | { examples: Record<string, ErrorExample> }
);

/**
 * Documents an error answer of a route: the docs/api.md#errors schema, always as JSON (also on routes
 * that produce other types), with an example built for this very status.
 */
export function ApiErrorResponse(
  status: number,
  options: ApiErrorOptions,
): MethodDecorator & ClassDecorator {
  const example = (e: ErrorExample) =>
    errorBody(status, e.message, {
      details: e.details,
      upstream: e.upstream,
      oauthError: e.oauthError,
    });
  const examples =
    'examples' in options
      ? {
          examples: Object.fromEntries(
            Object.entries(options.examples).map(([name, e]) => [
              name,
              { summary: e.message, value: example(e) },
            ]),
          ),
        }
      : { example: example(options.example) };
  return applyDecorators(
    ApiExtraModels(ErrorResponse),
    ApiResponse({
      status,
      description: options.description,
      headers: options.headers,
      content: {
        'application/json': { schema: { $ref: getSchemaPath(ErrorResponse) }, ...examples },
      },
    }),
  );
}
