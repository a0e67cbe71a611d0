import type { Delivery, JsonSchema, Page } from './types';

export const HOUR_MS = 3_600_000;
/** Pages of 100 deliveries read per webhook for its last-hour figures; more shows as "500+". */
export const STATS_MAX_PAGES = 5;

export interface HourStats {
  total: number;
  failed: number;
  /** More deliveries than the pages read: the figures are lower bounds. */
  more: boolean;
}

/**
 * A webhook's deliveries created in the last hour and how many of them failed, from its
 * delivery log (newest first), read page by page until a delivery is older than the hour.
 */
export async function lastHourStats(
  loadPage: (cursor: string | undefined) => Promise<Page<Delivery>>,
  now: number,
  maxPages = STATS_MAX_PAGES,
): Promise<HourStats> {
  const since = now - HOUR_MS;
  const stats: HourStats = { total: 0, failed: 0, more: false };
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page += 1) {
    const { data, next_cursor } = await loadPage(cursor);
    for (const delivery of data) {
      if (Date.parse(delivery.created_at) < since) return stats;
      stats.total += 1;
      if (delivery.status === 'failed') stats.failed += 1;
    }
    if (!next_cursor) return stats;
    cursor = next_cursor;
  }
  stats.more = true;
  return stats;
}

/** "job.started, job.completed" or one per line → the list the API takes. */
export function parseEvents(text: string): string[] {
  return [
    ...new Set(
      text
        .split(/[\s,]+/)
        .map((e) => e.trim())
        .filter(Boolean),
    ),
  ];
}

/** A value of <input type="datetime-local"> (the person's own time zone) as UTC with Z. */
export function localToUtc(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return undefined;
  return date.toISOString().replace(/\.000Z$/, 'Z');
}

/** A moment as <input type="datetime-local"> shows it, in the person's own time zone. */
export function utcToLocal(ms: number): string {
  const date = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}` +
    `T${pad(date.getHours())}:${pad(date.getMinutes())}`
  );
}

/** A Standard Webhooks secret: whsec_ and 24 random bytes in base64. */
export function generateSecret(random: (bytes: Uint8Array) => Uint8Array): string {
  const bytes = random(new Uint8Array(24));
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return `whsec_${btoa(binary)}`;
}

/**
 * What a table shows of a delivery or event id: its last 12 hex digits. Ids are UUIDv7, whose
 * first 12 digits are the time in milliseconds: every row of one minute began with the same 8.
 * The tail is random (48 bits), so rows differ there; the link's name holds the whole id.
 */
export const shortId = (id: string): string => `…${id.slice(-12)}`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Event ids are UUIDs; anything else is looked up as the platform's tracking id. */
export const looksLikeEventId = (text: string): boolean => UUID.test(text.trim());

const SAMPLE_STRINGS: Record<string, string> = {
  'date-time': '2026-01-01T09:30:00Z',
  date: '2026-01-01',
  uri: 'https://bridge.example.com/path',
  uuid: '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d',
  email: 'ada@example.com',
};

/**
 * An example value for a JSON Schema, for the event catalog's "example body": the schema's
 * own example where it gives one, else a value of its type. Of a oneOf it follows the first
 * branch, leaving out the properties only the other branches require.
 */
export function exampleFor(schema: JsonSchema, depth = 0): unknown {
  if (schema.examples && schema.examples.length > 0) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (schema.enum && schema.enum.length > 0) return schema.enum[0];
  if (depth > 8) return null;
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  const type =
    types.find((t) => t !== 'null') ?? (schema.properties ? 'object' : (types[0] ?? 'object'));
  switch (type) {
    case 'object': {
      const others = new Set(
        (schema.oneOf ?? []).slice(1).flatMap((branch) => branch.required ?? []),
      );
      const first = new Set(schema.oneOf?.[0]?.required ?? []);
      const value: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (others.has(name) && !first.has(name)) continue;
        value[name] = exampleFor(property, depth + 1);
      }
      return value;
    }
    case 'array':
      return schema.items ? [exampleFor(schema.items, depth + 1)] : [];
    case 'string':
      return SAMPLE_STRINGS[schema.format ?? ''] ?? 'string';
    case 'integer':
    case 'number':
      return typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    default:
      return null;
  }
}
