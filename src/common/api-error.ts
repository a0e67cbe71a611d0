import { HttpException, HttpStatus } from '@nestjs/common';
import { ErrorDetail, ErrorExtras } from './error-response';

/**
 * An HttpException that carries the extra parts of the error shape; throw it where a plain
 * Nest exception cannot say enough (validation details, upstream errors, extra headers).
 */
export class ApiError extends HttpException {
  constructor(
    status: HttpStatus | number,
    message: string,
    readonly extra: ErrorExtras & {
      headers?: Record<string, string>;
      /** A 5xx its thrower has logged already (once per change): no stack per answer. */
      quiet?: boolean;
    } = {},
  ) {
    super(message, status);
  }

  static validation(details: ErrorDetail[]): ApiError {
    const message = details.map((d) => d.message).join('; ') || 'Validation failed';
    return new ApiError(HttpStatus.BAD_REQUEST, message, { details });
  }
}
