import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from './api-error';
import { ErrorResponse, errorBody } from './error-response';

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
      const extra = exception instanceof ApiError ? exception.extra : {};
      return {
        body: errorBody(exception.getStatus(), this.messageOf(exception), extra),
        headers: extra.headers ?? {},
      };
    }
    return { body: errorBody(500, 'Internal server error'), headers: {} };
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
