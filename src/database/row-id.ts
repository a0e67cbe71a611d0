import { v7 } from 'uuid';

/**
 * The id of a new inbound event, event or delivery: a UUIDv7, whose leading bits are the time.
 * These tables grow by millions of rows, and a random (v4) key scatters each insert over the
 * whole of every index that holds an id (the primary keys, the event → deliveries key, the
 * attempts' delivery key, the idempotency key made from the inbound id): once those indexes
 * outgrow memory, every insert reads and rewrites a cold page. Time-ordered ids keep the
 * inserts at the right edge of each index. The column defaults make the same ids in SQL
 * (`uuid_v7()`, migration TimeOrderedIds).
 */
export const newRowId = (): string => v7();
