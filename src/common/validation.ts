import { ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from './api-error';
import { ErrorDetail } from './error-response';

function flatten(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      // A rule that checks an object's members names the one at fault (`headers.x-token: …`).
      field: message.startsWith(`${error.property}.`)
        ? `${field}${/^[^\s:]*/.exec(message.slice(error.property.length))![0]}`
        : field,
      // class-validator names nested properties by their leaf only; name the full path.
      message: message.startsWith(`${error.property} `)
        ? `${field}${message.slice(error.property.length)}`
        : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/** The global pipe: unknown fields are errors, and each bad field is named in `details`. */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => ApiError.validation(flatten(errors)),
  });
}
