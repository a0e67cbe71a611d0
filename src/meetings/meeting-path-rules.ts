import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

/*
 * The meetings and webinars rules of the platform's paths, which the generic passthrough
 * (src/platform-api) and the platform client (src/zoom) apply to every operation they serve,
 * recordings' included.
 */

const ME_MESSAGE =
  'cannot be "me": this service calls the platform with an account-level token, which has no ' +
  "user of its own; give the user's id or e-mail address";

/** What a user id or e-mail address may hold: nothing that would leave its path segment. */
const USER_ID = /^[^\s/\\?#%]{1,128}$/;

/**
 * The same rule with `me`, `.` and `..` left out, as the document states it (the refusals of
 * userIdProblem and of the validator's empty, `.` and `..` rule, in one pattern).
 */
export const USER_ID_PATTERN = '^(?![Mm][Ee]$)(?!\\.\\.?$)[^\\s/\\\\?#%]{1,128}$';

/**
 * A user id as this service takes it (SPEC §6, §16): the platform's own document also allows
 * `me`, which an account-level token cannot use, so the service refuses it (400) and says so.
 */
export const USER_ID_SCHEMA: SchemaObject = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: USER_ID_PATTERN,
};

export const USER_ID_RULE =
  'The user’s id or e-mail address. Unlike the platform, this service refuses `me` (400): it ' +
  'calls the platform with an account-level token, which has no user of its own.';

/** Why a `userId` path value is refused, or null (other parameters: null). */
export function userIdProblem(name: string, value: string): string | null {
  if (name !== 'userId') return null;
  if (value.toLowerCase() === 'me') return `${name} ${ME_MESSAGE}`;
  return USER_ID.test(value) ? null : `${name} must be a user id or an e-mail address`;
}

/**
 * The platform wants a meeting UUID that begins with `/` or contains `//` encoded twice (its
 * gateway decodes once before routing); every other value is encoded once. Every path parameter
 * is encoded this way, so no value can add a path segment upstream.
 */
export function encodePathParam(value: string): string {
  const once = encodeURIComponent(value);
  return value.startsWith('/') || value.includes('//') ? encodeURIComponent(once) : once;
}
