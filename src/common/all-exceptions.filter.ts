import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError } from './api-error';
import { ErrorResponse, errorBody } from './error-response';
import { methodNotAllowed } from './method-not-allowed';

const logger = new Logger('Errors');

/**
 * The answer to an error in the one shape of docs/api.md#errors, with the headers it asks for; a 5xx is
 * logged with its stack, and internals never reach the client. For the error filter and for
 * the routes served outside Nest (src/inbound/sources/webhook/zoom-events.route.ts).
 */
export function errorAnswer(exception: unknown): {
  body: ErrorResponse;
  headers: Record<string, string>;
} {
  const answer = toBody(exception);
  const quiet = exception instanceof ApiError && exception.extra.quiet === true;
  if (answer.body.statusCode >= 500 && !quiet) {
    logger.error(exception instanceof Error ? exception.stack : String(exception));
  }
  return answer;
}

function toBody(exception: unknown): { body: ErrorResponse; headers: Record<string, string> } {
  if (exception instanceof HttpException) {
    const extra = exception instanceof ApiError ? exception.extra : {};
    return {
      body: errorBody(exception.getStatus(), messageOf(exception), extra),
      headers: extra.headers ?? {},
    };
  }
  return { body: errorBody(500, 'Internal server error'), headers: {} };
}

function messageOf(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}

/** Turns every error into the one shape of docs/api.md#errors (errorAnswer). */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    if (
      response.headersSent &&
      (exception as { code?: unknown }).code === 'ERR_HTTP_HEADERS_SENT'
    ) {
      // The server answered first (src/common/http-server.ts: broken bytes after a request
      // in flight are answered through its response), so the handler's own answer had nowhere
      // to go: what was said is already logged there, and this is no failure of the handler.
      logger.warn(
        `the handler's answer came after the server had answered ${response.statusCode}; dropped`,
      );
      response.destroy();
      return;
    }
    const { body, headers } = errorAnswer(methodNotAllowed(exception, http.getRequest<Request>()));
    if (response.headersSent) {
      response.destroy();
      return;
    }
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.status(body.statusCode).json(body);
  }
}
