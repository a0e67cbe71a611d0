import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { PathParamRule, PathRules } from '../platform-api/path-rules';

/**
 * The meetings and webinars rules of the platform's paths (the Meetings, Webinars, Users and
 * Reports operations this module mounts), which the passthrough engine (src/platform-api) and
 * the platform client (src/zoom) apply without knowing them. Recordings mounts its own
 * (src/recordings/recording-path-rules.ts), made of the two parameter rules below.
 */

const ME_MESSAGE =
  'cannot be "me": this service calls the platform with an account-level token, which has no ' +
  "user of its own; give the user's id or e-mail address";

/**
 * What a user id or e-mail address may not hold: what would leave its path segment, and white
 * space spelled out character by character, since `\s` means different things in different
 * regular-expression engines (JavaScript's leaves out U+0085, Python's takes it in) and the
 * document's pattern must mean one thing to every client.
 */
const NOT_IN_USER_ID =
  '\\x09-\\x0d\\x20\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff/\\\\?#%';

/** What a user id or e-mail address may hold. */
const USER_ID = new RegExp(`^[^${NOT_IN_USER_ID}]{1,128}$`);

/**
 * The same rule with `me`, `.` and `..` left out, as the document states it (the refusals of
 * the userId rule and of the engine's empty, `.` and `..` rule, in one pattern).
 */
export const USER_ID_PATTERN = `^(?![Mm][Ee]$)(?!\\.\\.?$)[^${NOT_IN_USER_ID}]{1,128}$`;

/**
 * A user id as this service takes it (docs/api.md#platform-passthrough): the platform's own document also allows
 * `me`, which an account-level token cannot use, so the service refuses it (400) and says so.
 */
const USER_ID_SCHEMA: SchemaObject = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: USER_ID_PATTERN,
};

const USER_ID_DESCRIPTION =
  'The user’s id or e-mail address. Unlike the platform, this service refuses `me` (400): it ' +
  'calls the platform with an account-level token, which has no user of its own.';

/** A user named in a path: by id or e-mail address, never `me`. */
export const USER_ID_PARAM: PathParamRule = {
  problem: (name, value) => {
    if (value.toLowerCase() === 'me') return `${name} ${ME_MESSAGE}`;
    return USER_ID.test(value) ? null : `${name} must be a user id or an e-mail address`;
  },
  document: { description: USER_ID_DESCRIPTION, schema: USER_ID_SCHEMA },
};

/**
 * The platform wants a meeting UUID that begins with `/` or contains `//` encoded twice (its
 * gateway decodes once before routing); any other value, a meeting's number included, once.
 */
export function encodeMeetingUuid(value: string): string {
  const once = encodeURIComponent(value);
  return value.startsWith('/') || value.includes('//') ? encodeURIComponent(once) : once;
}

/** A parameter that may hold a meeting's or webinar's UUID (the platform's ids take one too). */
export const MEETING_UUID_PARAM: PathParamRule = { encode: encodeMeetingUuid };

/**
 * By name, across this module's groups: every meeting and webinar id may be a UUID where the
 * platform takes one, and only those are encoded twice; registrant, poll, message and other ids
 * are encoded once by the engine.
 */
export const MEETING_PATH_RULES: PathRules = {
  userId: USER_ID_PARAM,
  meetingId: MEETING_UUID_PARAM,
  webinarId: MEETING_UUID_PARAM,
  WebinarUUID: MEETING_UUID_PARAM,
};
