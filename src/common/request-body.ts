import { HttpException, HttpStatus } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { getSchemaPath } from '@nestjs/swagger';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api-error';
import { allowedMethods } from './method-not-allowed';
import { ErrorResponse, errorBody } from './error-response';
import { quote } from './field-rule';

/**
 * The most a request body may hold, on every route (the body parsers and /zoom/events' own
 * reader alike): docs/api.md#errors's 1 MiB.
 */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** What body-parser (and raw-body under it) failed on, as said to the client. */
interface ParserError {
  status?: number;
  type?: string;
  message?: string;
  charset?: string;
  encoding?: string;
}

export const PARSER_MESSAGES: Record<string, (error: ParserError) => string> = {
  // The parser's own text says where the JSON breaks ("Unexpected end of JSON input").
  'entity.parse.failed': (e) => `Request body is not valid JSON: ${e.message}`,
  'entity.too.large': () => 'Request body is larger than 1 MiB',
  'parameters.too.many': () => 'Request body has too many form parameters',
  'encoding.unsupported': (e) =>
    `Content-Encoding ${e.encoding ?? ''} is not supported; use gzip, deflate, br or identity`,
  'charset.unsupported': (e) =>
    `Request body charset ${e.charset ?? ''} is not supported; send utf-8`,
  'request.aborted': () => 'Request was aborted before its body was complete',
  'request.size.invalid': () => 'Request body length does not match Content-Length',
  // Neither is raised with today's options (Nest's verify only keeps the raw bytes, forms are
  // parsed flat), but a parser option away from it; the spec beside this file keeps the list
  // complete against the parsers' sources.
  'entity.verify.failed': () => 'Request body was refused',
  'querystring.parse.rangeError': () => 'Request body form parameters are nested too deep',
};

/**
 * Turns a body parser's failure into the docs/api.md#errors answer. Nest would otherwise pass a JSON
 * syntax error's raw text on as the whole message, and answer a body that does not match its
 * Content-Encoding (a zlib error, which carries no type) with a 500.
 */
export function bodyParserError(error: unknown): unknown {
  if (error instanceof HttpException) return error;
  const e = error as ParserError | null;
  const status = e?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return error;
  const message =
    e?.type === undefined
      ? 'Request body could not be read: it does not match its Content-Encoding'
      : (PARSER_MESSAGES[e.type]?.(e) ?? 'Request body could not be read');
  return new ApiError(status, message);
}

/** Express error middleware; mounted right after the parsers, it sees only their errors. */
export function answerBodyParserErrors(
  error: unknown,
  _req: Request,
  _res: Response,
  next: NextFunction,
): void {
  next(bodyParserError(error));
}

const NOT_JSON = 'Request body must be JSON: send Content-Type: application/json';

const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/**
 * The /api routes read JSON only, but for the routes `readsOwnBody` names (the platform's
 * multipart uploads, checked by the passthrough itself). Without this, a form or text body
 * would be parsed as a form or skipped, and the caller would hear about missing fields
 * instead of the content type.
 */
export const requireJsonBody =
  (readsOwnBody: (req: Request) => boolean) =>
  (req: Request, _res: Response, next: NextFunction): void => {
    // A method the path does not serve is its 405 (method-not-allowed.ts), whatever the body.
    if (
      hasBody(req) &&
      !req.is('application/json') &&
      !readsOwnBody(req) &&
      allowedMethods(req, req.originalUrl.split('?')[0]).includes(req.method)
    ) {
      next(unsupportedBody(req, NOT_JSON));
      return;
    }
    next();
  };

export const NOT_TOKEN_FORM =
  'Request body must be a form: send Content-Type: application/x-www-form-urlencoded ' +
  '(or application/json)';

/**
 * POST /oauth/token reads the form of RFC 6749 (and JSON): a body of any other type, or of
 * none, would be skipped by both parsers and answered "grant_type is required".
 */
export const requireTokenBody = (req: Request, _res: Response, next: NextFunction): void => {
  if (hasBody(req) && !req.is(['application/x-www-form-urlencoded', 'application/json'])) {
    next(unsupportedBody(req, NOT_TOKEN_FORM));
    return;
  }
  next();
};

function unsupportedBody(req: Request, wanted: string): ApiError {
  const sent = req.headers['content-type'];
  return new ApiError(
    HttpStatus.UNSUPPORTED_MEDIA_TYPE,
    `${wanted} (${sent ? `got ${quote(sent.split(';')[0].trim())}` : 'none was given'})`,
  );
}

/** Documents requireJsonBody: a 415 on every /api operation that takes a body. */
export function documentJsonBodies(document: OpenAPIObject): void {
  for (const [path, item] of Object.entries(document.paths)) {
    if (!path.startsWith('/api/')) continue;
    for (const operation of [item.post, item.put, item.patch, item.delete]) {
      const body = operation?.requestBody;
      // The multipart uploads take no JSON, and answer a wrong type with their own 415.
      if (!operation || !body || ('content' in body && !body.content['application/json'])) continue;
      operation.responses['415'] = {
        description: 'The body is not JSON (Content-Type is not application/json)',
        content: {
          'application/json': {
            schema: { $ref: getSchemaPath(ErrorResponse) },
            example: errorBody(
              HttpStatus.UNSUPPORTED_MEDIA_TYPE,
              `${NOT_JSON} (got "application/x-www-form-urlencoded")`,
            ),
          },
        },
      };
    }
  }
}
