import { CompiledFilter, compileFilter } from '../webhooks/event-filter';
import { ALL_PLATFORM_EVENTS, subscriptionsFor } from '../webhooks/subscription-events';
import type { AppConfig } from '../config/config.types';
import { filterMatches } from './fan-out-filter';

/*
 * Which webhooks get an event: the one rule of fan-out (docs/api.md#webhooks), in SQL for the
 * statements that create deliveries (publish(), the ingest statement, the replay of missed
 * events) and in TypeScript for the in-memory stores of the unit specs. A webhook gets an
 * event when it is active, its owner is still an API client (AUTH_CLIENTS), and it subscribes
 * to the event's kind, or, for a platform event (`zoom.<event>`), to `zoom.*`: one delivery
 * however many of its subscriptions match. A per-webhook condition on the event itself (a
 * filter) belongs here too, in both forms.
 *
 * Tenancy by platform account (docs/accounts.md#whose-events): an event from the platform (it
 * has a source) reaches a webhook only when its owner holds the event's `account_id`: every
 * account (AUTH_CLIENTS `accounts` absent or "*"), the account listed, or an account the owner
 * installed and that is not revoked. An event without an account reaches only owners holding
 * every account. The service's own events (no source) are not an account's. The ingest
 * statement selects the same webhooks starting from the account's holders
 * (receivingWebhooksSql), and the store spec test/stores/inbound-tenancy.store.spec.ts holds
 * the two forms to the same outcomes.
 */

/** Separates a client id from an account in receivingClients' entries (never in either). */
const HOLDS = '\t';
/** HOLDS as the SQL of the rule writes it, in an E'' string. */
const HOLDS_SQL = '\\t';
/** The entry of a client that holds every platform account. */
const ALL_ACCOUNTS = '*';

/** SQL names of what the rule reads: the webhooks row, the event's kind, the client ids. */
export interface FanOutTerms {
  /** Alias of a `webhooks` row. */
  webhook: string;
  /** SQL expression of the event's kind. */
  kind: string;
  /** SQL expression of the text[] of receivingClients(). */
  clients: string;
  /**
   * Alias of the event's row, whose `source` (jsonb) names its platform account: given
   * wherever deliveries are created or counted as missed. Without it the rule ignores accounts
   * (what counts how many webhooks may take a kind: an upper bound).
   */
  event?: string;
  /**
   * SQL expression of the event's notification body as jsonb (fan-out-filter.ts's
   * eventBodyJsonb), which a webhook's filter must match (docs/destinations.md): given wherever deliveries
   * are created or counted as missed. Without it the rule is the subscription alone (what
   * counts how many webhooks may take a kind).
   */
  body?: string;
}

/**
 * `expr` is one of the entries of the text[] `clients`, as a test PostgreSQL hashes. The rule's
 * statements are prepared, and in their generic plans `= ANY($n)` walks the whole array for
 * every webhook row it tests (PostgreSQL hashes `= ANY` only over a constant array), so with
 * many clients configured and many webhooks of a kind that was most of a fan-out's time; an
 * uncorrelated `IN (SELECT unnest(…))` is hashed once per statement
 * (figures in docs/benchmarks.md#many-platform-accounts).
 */
const amongClients = (expr: string, clients: string): string =>
  `${expr} IN (SELECT unnest(${clients}))`;

/** The subscriptions that take an event of kind `kind` (subscriptionsFor), as a SQL text[]. */
export const subscriptionsSql = (kind: string): string =>
  `CASE WHEN ${kind} LIKE 'zoom.%' THEN ARRAY[${kind}, '${ALL_PLATFORM_EVENTS}'] ` +
  `ELSE ARRAY[${kind}] END`;

/**
 * The rule as a SQL condition. `events && …` is served by the partial GIN index
 * webhooks_active_events_idx (`WHERE active`), for one kind or a whole batch's.
 */
export function receivesSql({ webhook: w, kind, clients, body, event }: FanOutTerms): string {
  return (
    `(${w}.active AND ${amongClients(`${w}.owner_client_id`, clients)} AND ${w}.events && ` +
    subscriptionsSql(kind) +
    (event === undefined ? '' : ` AND ${holdsSql(w, event, clients)}`) +
    (body === undefined ? ')' : ` AND ${filterMatches(w, body)})`)
  );
}

/**
 * Whether webhook `w`'s owner holds the account of event `e`: no source (the service's own
 * event), or the owner holds every account, or (the event naming one) the owner has it listed
 * or installed it. The installations are read only when the configuration does not decide.
 *
 * The installed pairs are an uncorrelated `IN (SELECT …)`, which PostgreSQL hashes once per
 * statement: a correlated EXISTS was one index probe per event and webhook, and with 1,000
 * clients' webhooks each event paid 1,000 of them (bench/accounts.ts: events of 1,000
 * accounts went at 0.11 of one account's rate; docs/benchmarks.md#many-platform-accounts).
 */
function holdsSql(w: string, e: string, clients: string): string {
  const account = `coalesce(${e}.source->>'account_id', '')`;
  return (
    `(${e}.source IS NULL OR ${amongClients(`${w}.owner_client_id || E'${HOLDS_SQL}${ALL_ACCOUNTS}'`, clients)} ` +
    `OR (${account} <> '' AND (${amongClients(`${w}.owner_client_id || E'${HOLDS_SQL}' || ${account}`, clients)} ` +
    `OR (${account}, ${w}.owner_client_id) IN (SELECT ins.account_id, ins.installed_by ` +
    `FROM installations ins WHERE ins.status <> 'revoked'))))`
  );
}

/**
 * The relation `holding(client, account)` of receivingClients' entries that hold accounts by
 * configuration (`<client>\t*`, `<client>\t<account>`), for receivingWebhooksSql: a CTE of the
 * statement, so the array is read once per statement rather than once per event.
 */
export const holdingSql = (clients: string): string =>
  `SELECT split_part(c, E'${HOLDS_SQL}', 1) AS client, split_part(c, E'${HOLDS_SQL}', 2) AS account ` +
  `FROM unnest(${clients}) c WHERE strpos(c, E'${HOLDS_SQL}') > 0`;

/**
 * A webhook's kinds and its owner (a tab, then the client id; no kind has a tab) in one array:
 * the expression of the GIN index webhooks_active_owner_events_idx (`WHERE active`), which
 * finds one owner's webhooks of a kind without reading the kind's other webhooks. Spelled as the
 * migration 1768100000000-webhook-owner-events spells it, or the index is not used.
 */
const ownerEventsSql = (w: string): string =>
  `array_append(${w}.events, E'${HOLDS_SQL}' || ${w}.owner_client_id)`;

/**
 * Most clients holding every account by configuration for which receivingWebhooksSql looks up
 * each holder's webhooks. One lookup costs about what reading a dozen webhook rows of the kind
 * does (docs/benchmarks.md#many-platform-accounts), so past this many, as in a deployment whose
 * many clients have no `accounts` (each holding every account), the event's webhooks are read
 * by kind instead.
 */
export const ALL_ACCOUNTS_HOLDERS_LOOKED_UP = 16;

/** What receivingWebhooksSql names: FanOutTerms' without a webhook alias, and the holdings. */
export interface ReceivingTerms extends Required<Pick<FanOutTerms, 'kind' | 'clients' | 'event'>> {
  /** Name of the statement's relation of holdingSql(clients). */
  holding: string;
}

/**
 * The ids (`id`) of the webhooks that receive an event by the rule, filters aside: a SELECT
 * for a LATERAL or EXISTS, correlated on the event's kind and row, that selects what
 * receivesSql with the event selects. Found the other way round: the clients that hold the
 * event's account first (configured with it or with `*`, and its installer when configured and
 * not revoked), then each one's active webhooks of the kind, both keys looked up together in
 * webhooks_active_owner_events_idx, so an event of one of 1,000 accounts reads its holders'
 * webhooks, not the 1,000 of its kind (docs/benchmarks.md#many-platform-accounts). The owner is
 * matched through that index only, in a subquery PostgreSQL cannot flatten (OFFSET 0): with an
 * equality on owner_client_id, or the holders joined to the kind's webhooks, it read an
 * owner's webhooks of every kind or every webhook of the kind again. The holders are a UNION:
 * a client holding the account twice yields its webhooks once. The installer's test against
 * the configured clients is `= ANY`, one array walk per event (a join there walked it too).
 *
 * An event without a source (the service's own), or with more than
 * ALL_ACCOUNTS_HOLDERS_LOOKED_UP clients holding every account, takes receivesSql as it is,
 * read by kind; both tests are constant within a row, so PostgreSQL runs one branch.
 */
export function receivingWebhooksSql({ kind, clients, event: e, holding }: ReceivingTerms): string {
  const account = `coalesce(${e}.source->>'account_id', '')`;
  const ownerEvents = ownerEventsSql('w');
  const byKind =
    `(SELECT count(*) FROM ${holding} WHERE account = '${ALL_ACCOUNTS}') ` +
    `> ${ALL_ACCOUNTS_HOLDERS_LOOKED_UP}`;
  return `SELECT w.id FROM webhooks w
      WHERE (${e}.source IS NULL OR ${byKind})
        AND ${receivesSql({ webhook: 'w', kind, clients, event: e })}
      UNION ALL
      SELECT w.id
      FROM (SELECT h.client FROM ${holding} h
            WHERE h.account = '${ALL_ACCOUNTS}' OR (${account} <> '' AND h.account = ${account})
            UNION
            SELECT ins.installed_by FROM installations ins
            WHERE ${account} <> '' AND ins.account_id = ${account} AND ins.status <> 'revoked'
              AND ins.installed_by = ANY(${clients})) h
      CROSS JOIN LATERAL (
        SELECT w.id FROM webhooks w
        WHERE w.active AND ${ownerEvents} @> ARRAY[E'${HOLDS_SQL}' || h.client]
          AND ${ownerEvents} && ${subscriptionsSql(kind)}
        OFFSET 0) w
      WHERE ${e}.source IS NOT NULL AND NOT ${byKind}`;
}

/**
 * Of an event's source (jsonb, at alias `e`), what the rule reads: whether there is one, and its
 * account. Events of one kind whose sources agree on this reach the same webhooks (filters
 * aside), so a statement can count each pair's webhooks once (the ingest's `reach`).
 */
export const ruleSourceSql = (e: string): string =>
  `CASE WHEN ${e}.source IS NULL THEN NULL ` +
  `ELSE jsonb_build_object('account_id', ${e}.source->'account_id') END`;

/** What the rule reads of a webhook. */
export interface FanOutWebhook {
  active: boolean;
  ownerClientId: string;
  events: readonly string[];
  /** The filter as set (docs/destinations.md); null or absent: none. */
  filter?: Record<string, unknown> | null;
}

// Compiled once per filter text, as PostgreSQL keeps the compiled path on the row.
const compiled = new Map<string, CompiledFilter>();
function filterOf(filter: Record<string, unknown>): CompiledFilter {
  const key = JSON.stringify(filter);
  let found = compiled.get(key);
  if (!found) compiled.set(key, (found = compileFilter(filter)));
  return found;
}

/**
 * The client ids whose webhooks the rule lets receive (those AUTH_CLIENTS configures), then
 * what each holds of the platform accounts by configuration: `<client>\t*` for every account,
 * `<client>\t<account>` per account listed. One array, so every statement of the rule takes one
 * parameter; an entry with a tab never equals a client id.
 */
export const receivingClients = (config: Pick<AppConfig, 'auth'>): string[] => [
  ...config.auth.clients.map((c) => c.clientId),
  ...config.auth.clients.flatMap((c) =>
    c.accounts === ALL_ACCOUNTS
      ? [`${c.clientId}${HOLDS}${ALL_ACCOUNTS}`]
      : c.accounts.map((account) => `${c.clientId}${HOLDS}${account}`),
  ),
];

/** receivingClients' entries of one client holding every platform account (as before accounts). */
export const holdingEveryAccount = (clientId: string): string[] => [
  clientId,
  `${clientId}${HOLDS}${ALL_ACCOUNTS}`,
];

/** The account part of the rule in TypeScript, for a body's source (installations: none known). */
function holds(owner: string, body: unknown, clientIds: readonly string[]): boolean {
  const source = (body as { source?: { account_id?: unknown } | null } | undefined)?.source;
  if (body === undefined || source === null || source === undefined) return true;
  if (clientIds.includes(`${owner}${HOLDS}${ALL_ACCOUNTS}`)) return true;
  const account = typeof source.account_id === 'string' ? source.account_id : '';
  return account !== '' && clientIds.includes(`${owner}${HOLDS}${account}`);
}

/** The rule in TypeScript, as receivesSql has it. */
export function receives(
  webhook: FanOutWebhook,
  kind: string,
  clientIds: readonly string[],
  body?: unknown,
): boolean {
  return (
    webhook.active &&
    clientIds.includes(webhook.ownerClientId) &&
    holds(webhook.ownerClientId, body, clientIds) &&
    subscriptionsFor(kind).some((subscription) => webhook.events.includes(subscription)) &&
    (body === undefined || !webhook.filter || filterOf(webhook.filter).matches(body))
  );
}
