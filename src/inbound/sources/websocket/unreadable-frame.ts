/** The event name under which a socket frame that holds no readable event is kept. */
export const UNREADABLE_FRAME_EVENT = 'websocket.unreadable_frame';

/**
 * What the socket read but the ingest cannot take as an event (content that is not JSON, not
 * a JSON object, or no content at all), wrapped as an event of its own so that it is stored,
 * counted unmappable and shown to `zoom.*` subscribers like any unmappable event: nothing
 * read from the socket is dropped (docs/inbound-sources.md#what-is-kept). `payload.text` is
 * exactly what came; `payload.part` says whether it was a message's `content` or a whole frame.
 */
export function unreadableFrameEnvelope(
  text: string,
  part: 'content' | 'frame',
  now = Date.now(),
): { event: string; body: Buffer } {
  const envelope = { event: UNREADABLE_FRAME_EVENT, event_ts: now, payload: { part, text } };
  return { event: UNREADABLE_FRAME_EVENT, body: Buffer.from(JSON.stringify(envelope), 'utf8') };
}
