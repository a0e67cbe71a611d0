import { PreciseNumber } from '../common/precise-json';

/**
 * The one way mapping code reads what the platform sent (event mapping, dedupe key, recording
 * automation). A signed event is stored and answered 200 whatever it holds (docs/api.md#platform-events-post-zoomevents), so any
 * field may be null, missing, of another type, or a number past what JavaScript holds (a
 * PreciseNumber): each reader checks what it reads and answers a typed value or an empty one,
 * and never throws. Code that reads a platform field as `x.y` on an unchecked value
 * reintroduces the bug class these exist for (a null in `recording_files` once made every
 * delivery of an event fail).
 */
export type PlatformObject = Record<string, unknown>;

/** An object (not an array, not null), else an empty one. */
export const asRecord = (value: unknown): PlatformObject =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  !(value instanceof PreciseNumber)
    ? (value as PlatformObject)
    : {};

/** Whether the value is an object a field can be read from. */
export const isRecord = (value: unknown): value is PlatformObject => asRecord(value) === value;

/** A string, or a number as its text (ids come as either), else null. */
export const asText = (value: unknown): string | null =>
  typeof value === 'string' || typeof value === 'number' || value instanceof PreciseNumber
    ? String(value)
    : null;

/** A string, else null (a number is not taken for text). */
export const asString = (value: unknown): string | null =>
  typeof value === 'string' ? value : null;

/** An array, else an empty one. */
export const asList = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

/** The objects of an array, skipping what is not one (a null among recording files). */
export const recordsOf = (value: unknown): PlatformObject[] => asList(value).filter(isRecord);

/** The value at a path of object keys, or undefined where any step is not an object. */
export function at(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    const record = asRecord(current);
    if (!Object.hasOwn(record, key)) return undefined;
    current = record[key];
  }
  return current;
}

/**
 * A failure that comes from what the event holds (no meeting named, no file list where one is
 * needed): deterministic, so final at once. No retry is made as if one could help.
 */
export class UnmappableEventError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnmappableEventError';
  }
}

/**
 * Whether a failure would recur on every retry: the event's content, or a bug reading it (a
 * TypeError, or a URIError or RangeError from text or numbers it could not take).
 */
export const isDeterministicFailure = (error: unknown): boolean =>
  error instanceof UnmappableEventError ||
  error instanceof TypeError ||
  error instanceof URIError ||
  error instanceof RangeError;
