import { storableText } from '../../common/unicode';

/** Longest ordering key kept: a platform uuid is about two dozen characters. */
export const ORDER_KEY_MAX_LENGTH = 200;

/**
 * The ordering key of an event about the platform object `object` (docs/receiving.md#ordered-delivery-per-meeting): its `uuid`, the
 * one meeting or webinar instance it concerns. Null (the event is not ordered) when it has
 * none, or one that cannot be an identifier.
 */
export function orderKeyOf(object: Record<string, unknown> | null | undefined): string | null {
  const uuid = object?.uuid;
  if (typeof uuid !== 'string' || uuid === '' || uuid.length > ORDER_KEY_MAX_LENGTH) return null;
  // Stored as text: U+0000 and lone surrogates, which PostgreSQL refuses, become U+FFFD (the
  // platform's uuids never hold them; a fuzzed one must not cost the event its row).
  return storableText(uuid);
}
