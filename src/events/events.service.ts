import { HttpStatus, Injectable } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { decodeCursor, toPage } from '../common/cursor';
import { DEFAULT_PAGE_LIMIT } from '../common/page-query';
import {
  EventDetailResponse,
  EventListResponse,
  toEventDetailResponse,
  toEventResponse,
} from './dto/event.response';
import { ListEventsQuery } from './dto/list-events.query';
import { EventLookupStore } from '../delivery-record/event-lookup.store';

/**
 * The event lookup of docs/operations.md: an API client sees the events that reached its own webhooks,
 * and of each only its own deliveries; another client's event is not found.
 */
@Injectable()
export class EventsService {
  constructor(private readonly store: EventLookupStore) {}

  async get(ownerClientId: string, eventId: string): Promise<EventDetailResponse> {
    const found = await this.store.findOwned(ownerClientId, eventId);
    if (found === null) throw new ApiError(HttpStatus.NOT_FOUND, 'Event not found');
    return toEventDetailResponse(found.event, found.deliveries);
  }

  async list(ownerClientId: string, q: ListEventsQuery): Promise<EventListResponse> {
    const limit = q.limit ?? DEFAULT_PAGE_LIMIT;
    const rows = await this.store.listOwned(ownerClientId, {
      trackingId: q.tracking_id,
      kind: q.event,
      since: q.since === undefined ? undefined : new Date(q.since),
      until: q.until === undefined ? undefined : new Date(q.until),
      cursor: decodeCursor(q.cursor),
      limit,
    });
    return toPage(rows, limit, toEventResponse);
  }
}
