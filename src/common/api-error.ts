import { HttpException, HttpStatus } from '@nestjs/common';
import { ErrorDetail, ErrorExtras } from './error-response';

const MAX_DETAILS = 100;

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

  /**
   * At most MAX_DETAILS details: a hostile body can break thousands of rules at once, and an
   * answer naming every one would be larger than the body (docs/api.md, "Errors").
   */
  static validation(details: readonly ErrorDetail[]): ApiError {
    const shown = details.slice(0, MAX_DETAILS);
    const more = details.length - shown.length;
    const message =
      shown.map((d) => d.message).join('; ') + (more > 0 ? `; … and ${more} more` : '') ||
      'Validation failed';
    return new ApiError(HttpStatus.BAD_REQUEST, message, { details: shown });
  }
}
