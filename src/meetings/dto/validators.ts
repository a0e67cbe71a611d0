import { Transform } from 'class-transformer';
import { ValidateBy, ValidateIf } from 'class-validator';
import { Satisfies } from '../../common/field-rule';

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

/**
 * An absent field is fine; an explicit null is checked like any value (and so refused),
 * where @IsOptional would wave it through to the platform.
 */
export const Optional = () => ValidateIf((_object, value) => value !== undefined);

/** ISO 8601 in UTC ending in `Z`, as the platform's `start_time` wants it. */
export const IsUtcTimestamp = () =>
  Satisfies((value, field) => {
    const m = typeof value === 'string' ? UTC_TIMESTAMP.exec(value) : null;
    return m !== null && realDate(m[1], m[2], m[3], m[4], m[5], m[6])
      ? null
      : `${field} must be an ISO 8601 UTC timestamp ending in Z, like 2025-01-31T14:00:00Z`;
  });

/** A real calendar date written yyyy-mm-dd. */
export const IsCalendarDate = () =>
  Satisfies((value, field) => {
    const m = typeof value === 'string' ? CALENDAR_DATE.exec(value) : null;
    return m !== null && realDate(m[1], m[2], m[3])
      ? null
      : `${field} must be a date written yyyy-mm-dd, like 2025-01-31`;
  });

/** A yyyy-mm-dd date not before the one in the property `other` (when that one is set). */
export const IsNotBefore = (other: string) =>
  ValidateBy({
    name: 'isNotBefore',
    validator: {
      validate: (value: unknown, args) => {
        const before = (args?.object as Record<string, unknown> | undefined)?.[other];
        return typeof before !== 'string' || typeof value !== 'string' || value >= before;
      },
      defaultMessage: (args) => `${args?.property ?? 'date'} must not be before ${other}`,
    },
  });

/**
 * Account-level (server-to-server) tokens have no user of their own, so the platform's `me`
 * keyword cannot stand for one.
 */
export const IsNotMe = () =>
  Satisfies((value, field) =>
    typeof value === 'string' && value.toLowerCase() === 'me'
      ? `${field} cannot be "me": this service calls the platform with an account-level ` +
        "token, which has no user of its own; give the user's id or e-mail address"
      : null,
  );

/**
 * Query strings arrive as text: digits become a number, anything else stays as it is so that
 * the integer check names it (implicit conversion would turn "abc" into NaN and "" into 0).
 */
export const ToInt = () =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^\d{1,9}$/.test(value) ? Number(value) : value,
  );
