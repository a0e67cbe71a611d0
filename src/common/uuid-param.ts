import { Param, ParseUUIDPipe } from '@nestjs/common';
import { ApiError } from './api-error';
import { ApiErrorResponse } from './error-response';

/** A UUID in its canonical textual form (any version), as PostgreSQL prints the uuid type. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path parameter that must be a UUID (any version); otherwise 400 naming it. */
export const UuidParam = (name: string): ParameterDecorator =>
  Param(
    name,
    new ParseUUIDPipe({
      exceptionFactory: () =>
        ApiError.validation([{ field: name, message: `${name} must be a UUID` }]),
    }),
  );

/** The document's 400 for a UuidParam `name` that is not a UUID, in the one error shape. */
export const ApiUuidRefused = (name = 'id'): MethodDecorator & ClassDecorator =>
  ApiErrorResponse(400, {
    description: `The ${name} is not a UUID`,
    example: {
      message: `${name} must be a UUID`,
      details: [{ field: name, message: `${name} must be a UUID` }],
    },
  });
