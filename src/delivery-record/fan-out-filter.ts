/**
 * The filter part of the fan-out rule (docs/destinations.md), for every statement that decides which
 * webhooks get an event: a webhook without a filter takes every event of its kinds; one with a
 * filter only those whose notification body matches its compiled path (webhooks/event-filter.ts),
 * matched by PostgreSQL within the statement, so a filtered-out event writes no row at all and a
 * replay does not count it as missed. The body is built as jsonb from the event's columns only
 * for a webhook that has a filter: webhooks without one cost a NULL test.
 */

/**
 * The notification body (docs/api.md#notifications) as jsonb, from an event's columns under `alias` (`columns`
 * renames those that are called otherwise there).
 */
export const eventBodyJsonb = (
  alias: string,
  columns: { id?: string; kind?: string } = {},
): string =>
  `jsonb_build_object('id', ${alias}.${columns.id ?? 'id'}, ` +
  `'event', ${alias}.${columns.kind ?? 'kind'}, 'created_at', ` +
  `to_char(${alias}.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), ` +
  `'data', ${alias}.data, 'source', ${alias}.source)`;

/** Whether webhook `webhook` (an alias of webhooks) takes the event whose body is `body`. */
export const filterMatches = (webhook: string, body: string): string =>
  `(${webhook}.filter_path IS NULL OR ` +
  `jsonb_path_match(${body}, ${webhook}.filter_path, ${webhook}.filter_vars))`;
