/**
 * A statement as its store sends it to PostgreSQL, registered so that its final text is kept
 * in a reviewed file (queries/<store>.sql, rendered by the module's queries spec): a change to
 * a fragment shows there as the statements it changes. `prepared` is the name preparedQuery
 * gives it on every connection; such names must stay stable and unique.
 */
export interface Statement {
  /** The store method that runs it: `PgDeliveryStore.claim`. */
  method: string;
  prepared?: string;
  sql: string;
}
