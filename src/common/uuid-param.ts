import { Param, ParseUUIDPipe } from '@nestjs/common';
import { ApiError } from './api-error';

/** A path parameter that must be a UUID (any version); otherwise 400 naming it. */
export const UuidParam = (name: string): ParameterDecorator =>
  Param(
    name,
    new ParseUUIDPipe({
      exceptionFactory: () =>
        ApiError.validation([{ field: name, message: `${name} must be a UUID` }]),
    }),
  );
