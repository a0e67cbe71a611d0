import { ArgumentMetadata, ValidationError, ValidationPipe } from '@nestjs/common';
import { ApiError } from './api-error';
import { ErrorDetail } from './error-response';

/** A member named right after the property: `.name` (up to a space or colon) or `["json"]`. */
const MEMBER = /^(?:\.[^\s:[]+|\["(?:[^"\\]|\\.)*"\])/;

function flatten(errors: ValidationError[], parent = ''): ErrorDetail[] {
  return errors.flatMap((error) => {
    const field = parent ? `${parent}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      // A rule that checks an object's members names the one at fault: `headers.x-token: …`,
      // or `headers["a b"]: …` for a name that is no token (docs/api.md).
      field: message.startsWith(error.property)
        ? field + (MEMBER.exec(message.slice(error.property.length))?.[0] ?? '')
        : field,
      // class-validator names nested properties by their leaf only; name the full path.
      message: message.startsWith(`${error.property} `)
        ? `${field}${message.slice(error.property.length)}`
        : message,
    }));
    return [...own, ...flatten(error.children ?? [], field)];
  });
}

/**
 * Keys the pipe would silently lose: Nest deletes `__proto__`, `constructor` and `prototype`
 * (prototype pollution), and class-transformer skips any key that names a member of
 * Object.prototype (`toString`, `hasOwnProperty`, …). A filter `{"constructor": 1}` would then
 * be stored as `{}` and match every event, a header `__proto__` shown as `{}` and never sent.
 */
const LOST_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), 'prototype']);

/** The path of the first key of a JSON body that LOST_KEYS holds, or null. */
function lostKeyPath(value: unknown, path: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, item] of Object.entries(value)) {
    const at = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (!Array.isArray(value) && LOST_KEYS.has(key)) return at;
    const found = lostKeyPath(item, at);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Refuses, before class-transformer copies it, a body with a key it would lose (LOST_KEYS):
 * a client must hear that `headers.constructor` is not taken, not find it gone. The detail
 * names the key's whole path (`filter.data.topic.toString`, `headers.__proto__`).
 */
class LosslessValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && this.toValidate(metadata)) {
      const path = lostKeyPath(value, '');
      if (path !== null) {
        throw ApiError.validation([
          {
            field: path,
            message:
              `${path}: this key is not accepted (keys named like members of JavaScript ` +
              'objects, such as __proto__, constructor, prototype or toString, are refused)',
          },
        ]);
      }
    }
    return super.transform(value, metadata);
  }
}

/** The global pipe: unknown fields are errors, and each bad field is named in `details`. */
export function createValidationPipe(): ValidationPipe {
  return new LosslessValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    transformOptions: { enableImplicitConversion: false },
    exceptionFactory: (errors) => ApiError.validation(flatten(errors)),
  });
}
