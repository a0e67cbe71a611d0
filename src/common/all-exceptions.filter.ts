import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import type { Response } from 'express';
import { ApiError } from './api-error';
import { ErrorResponse } from './error-response';

interface BodyParserError {
  status?: number;
  statusCode?: number;
  type?: string;
  expose?: boolean;
}

const BODY_PARSER_MESSAGES: Record<string, string> = {
  'entity.parse.failed': 'Request body is not valid JSON',
  'entity.too.large': 'Request body is larger than 1 MiB',
  'encoding.unsupported': 'Request body encoding is not supported',
  'charset.unsupported': 'Request body charset is not supported',
  'request.aborted': 'Request was aborted',
};

/** Turns every error into the one shape of SPEC §7; internals never reach the client. */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    const { body, headers } = this.toBody(exception);
    if (body.statusCode >= 500) {
      this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    }
    if (response.headersSent) {
      response.destroy();
      return;
    }
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    response.status(body.statusCode).json(body);
  }

  private toBody(exception: unknown): { body: ErrorResponse; headers: Record<string, string> } {
    if (exception instanceof HttpException) {
      const statusCode = exception.getStatus();
      const body: ErrorResponse = {
        statusCode,
        error: STATUS_CODES[statusCode] ?? 'Error',
        message: this.messageOf(exception),
      };
      if (exception instanceof ApiError) {
        if (exception.extra.details) body.details = exception.extra.details;
        if (exception.extra.upstream) body.upstream = exception.extra.upstream;
        if (exception.extra.oauthError) {
          body.error = exception.extra.oauthError;
          body.error_description = body.message;
        }
        return { body, headers: exception.extra.headers ?? {} };
      }
      return { body, headers: {} };
    }
    const parserError = exception as BodyParserError;
    const status = parserError?.status ?? parserError?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500 && parserError.type) {
      return {
        body: {
          statusCode: status,
          error: STATUS_CODES[status] ?? 'Error',
          message: BODY_PARSER_MESSAGES[parserError.type] ?? 'Malformed request',
        },
        headers: {},
      };
    }
    return {
      body: { statusCode: 500, error: 'Internal Server Error', message: 'Internal server error' },
      headers: {},
    };
  }

  private messageOf(exception: HttpException): string {
    const response = exception.getResponse();
    if (typeof response === 'string') return response;
    const message = (response as { message?: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string') return message;
    return exception.message;
  }
}
