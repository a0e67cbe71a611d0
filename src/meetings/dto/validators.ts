import { Transform } from 'class-transformer';
import { ValidationOptions, registerDecorator } from 'class-validator';

const UTC_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?Z$/;
const CALENDAR_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether y-m-d (and h:m:s) name a real instant, e.g. not 2025-02-30 or 25:00. */
function realDate(y: string, mo: string, d: string, h = '00', mi = '00', s = '00'): boolean {
  const date = new Date(Date.UTC(+y, +mo - 1, +d, +h, +mi, +s));
  return (
    date.getUTCFullYear() === +y &&
    date.getUTCMonth() === +mo - 1 &&
    date.getUTCDate() === +d &&
    date.getUTCHours() === +h &&
    date.getUTCMinutes() === +mi &&
    date.getUTCSeconds() === +s
  );
}

function rule(
  name: string,
  message: string,
  test: (value: unknown, object: Record<string, unknown>) => boolean,
  options?: ValidationOptions,
): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name,
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: `$property ${message}`, ...options },
      validator: {
        validate: (value: unknown, args) => test(value, args?.object as Record<string, unknown>),
      },
    });
}

/** ISO 8601 in UTC ending in `Z`, as the platform's `start_time` wants it. */
export const IsUtcTimestamp = (options?: ValidationOptions) =>
  rule(
    'isUtcTimestamp',
    'must be an ISO 8601 UTC timestamp ending in Z, like 2025-01-31T14:00:00Z',
    (value) => {
      const m = typeof value === 'string' ? UTC_TIMESTAMP.exec(value) : null;
      return m !== null && realDate(m[1], m[2], m[3], m[4], m[5], m[6]);
    },
    options,
  );

/** A real calendar date written yyyy-mm-dd. */
export const IsCalendarDate = (options?: ValidationOptions) =>
  rule(
    'isCalendarDate',
    'must be a date written yyyy-mm-dd, like 2025-01-31',
    (value) => {
      const m = typeof value === 'string' ? CALENDAR_DATE.exec(value) : null;
      return m !== null && realDate(m[1], m[2], m[3]);
    },
    options,
  );

/** A yyyy-mm-dd date not before the one in `other` (when that one is set). */
export const IsNotBefore = (other: string, options?: ValidationOptions) =>
  rule(
    'isNotBefore',
    `must not be before ${other}`,
    (value, object) =>
      typeof object[other] !== 'string' || typeof value !== 'string' || value >= object[other],
    options,
  );

/**
 * Account-level (server-to-server) tokens have no user of their own, so the platform's `me`
 * keyword cannot stand for one.
 */
export const IsNotMe = (options?: ValidationOptions) =>
  rule(
    'isNotMe',
    'cannot be "me": this service calls the platform with an account-level token, which has no ' +
      "user of its own; give the user's id or e-mail address",
    (value) => typeof value !== 'string' || value.toLowerCase() !== 'me',
    options,
  );

/**
 * Query strings arrive as text: digits become a number, anything else stays as it is so that
 * the integer check names it (implicit conversion would turn "abc" into NaN and "" into 0).
 */
export const ToInt = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value,
  );
