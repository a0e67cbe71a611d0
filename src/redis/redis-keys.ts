/**
 * The start of the keys of one group that a script or transaction touches together, under the
 * service's prefix (QUEUE_PREFIX): `{<prefix>:<group>}`. On a Redis Cluster only the part in
 * braces (the hash tag) picks the slot, so a group's keys live on one node and its scripts
 * never meet CROSSSLOT, while each group (each queue, the slots, reconciliation) hashes apart
 * and the groups spread over the nodes (docs/operations.md#redis-keys). On one server the
 * braces are plain characters of the key.
 */
export function keyGroup(prefix: string, group: string): string {
  return `{${prefix}:${group}}`;
}

/**
 * The patterns (SCAN MATCH) of every key of a prefix: the grouped keys of keyGroup and the
 * single keys (a lock, a lease) written as `<prefix>:…`, which need no tag.
 */
export function keyPatterns(prefix: string): string[] {
  return [`${prefix}:*`, `{${prefix}:*`];
}
