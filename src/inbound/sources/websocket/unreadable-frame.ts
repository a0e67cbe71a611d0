/** The event name under which a socket frame that holds no readable event is kept. */
export const UNREADABLE_FRAME_EVENT = 'websocket.unreadable_frame';

/**
 * What the socket read but the ingest cannot take as an event (content that is not JSON, not
 * a JSON object, nested too deep, no content at all, a binary frame that is not UTF-8),
 * wrapped as an event of its own so that it is stored, counted unmappable and shown to
 * `zoom.*` subscribers like any unmappable event: nothing read from the socket is dropped
 * (docs/inbound-sources.md#what-is-kept). `payload.part` says whether it was a message's
 * `content` or a whole frame; `payload.text` is exactly what came, or, for bytes that are not
 * UTF-8, `payload.base64` holds them (decoding them as text would replace them with U+FFFD).
 */
export function unreadableFrameEnvelope(
  what: string | Buffer,
  part: 'content' | 'frame',
  now = Date.now(),
): { event: string; body: Buffer } {
  const kept =
    typeof what === 'string' ? { part, text: what } : { part, base64: what.toString('base64') };
  const envelope = { event: UNREADABLE_FRAME_EVENT, event_ts: now, payload: kept };
  return { event: UNREADABLE_FRAME_EVENT, body: Buffer.from(JSON.stringify(envelope), 'utf8') };
}
