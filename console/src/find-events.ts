import { Api, ApiProblem, seg } from './api';
import { looksLikeEventId } from './logic';
import type { EventRecord, Page } from './types';

export const LOOKUP_UNAVAILABLE =
  'Event lookup is unavailable: this service does not offer GET /api/events yet.';

/**
 * "Find event": by event id when the text is one (a UUID), else, or when no event of the
 * caller's has that id, by the platform's tracking id. A service without the lookup routes
 * answers 404 for the route itself, which becomes LOOKUP_UNAVAILABLE.
 */
export async function findEvents(api: Api, query: string): Promise<EventRecord[]> {
  const text = query.trim();
  try {
    if (looksLikeEventId(text)) {
      try {
        return [await api.get<EventRecord>(`/api/events/${seg(text)}`)];
      } catch (error) {
        if (!(error instanceof ApiProblem) || error.status !== 404 || error.noRoute) throw error;
      }
    }
    const page = await api.get<Page<EventRecord>>('/api/events', { tracking_id: text });
    // The list may leave the deliveries out: each event found is read whole.
    return await Promise.all(
      page.data.map((e) => (e.deliveries ? e : api.get<EventRecord>(`/api/events/${seg(e.id)}`))),
    );
  } catch (error) {
    if (error instanceof ApiProblem && error.noRoute) {
      throw new ApiProblem(404, LOOKUP_UNAVAILABLE);
    }
    throw error;
  }
}
