import { PageCursor, PageLimit } from '../../common/page-query';

/** Query of GET /api/webhooks. */
export class ListWebhooksQuery {
  @PageLimit()
  limit?: number;

  @PageCursor()
  cursor?: string;
}
