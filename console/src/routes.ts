/** The console's pages, addressed by the URL fragment so the service needs no route per page. */
export type Route =
  | { page: 'webhooks' }
  | { page: 'new-webhook' }
  | { page: 'webhook'; id: string }
  | { page: 'delivery'; webhookId: string; deliveryId: string }
  | { page: 'event-types' }
  | { page: 'find-event'; query?: string }
  | { page: 'reconciliations' }
  | { page: 'inbound' }
  | { page: 'attendance'; uuid?: string }
  | { page: 'accounts' }
  | { page: 'not-found' };

export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '');
  const [pathname, search = ''] = path.split('?');
  const parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'webhooks')) {
    return { page: 'webhooks' };
  }
  if (parts[0] === 'webhooks') {
    if (parts.length === 2 && parts[1] === 'new') return { page: 'new-webhook' };
    if (parts.length === 2) return { page: 'webhook', id: parts[1] };
    if (parts.length === 4 && parts[2] === 'deliveries') {
      return { page: 'delivery', webhookId: parts[1], deliveryId: parts[3] };
    }
  }
  if (parts.length === 1 && parts[0] === 'event-types') return { page: 'event-types' };
  if (parts.length === 1 && parts[0] === 'reconciliations') return { page: 'reconciliations' };
  if (parts.length === 1 && parts[0] === 'inbound') return { page: 'inbound' };
  if (parts.length === 1 && parts[0] === 'accounts') return { page: 'accounts' };
  // A meeting uuid may hold "/": href encodes it, so it is one part here.
  if (parts[0] === 'attendance' && parts.length <= 2) {
    return parts.length === 2 ? { page: 'attendance', uuid: parts[1] } : { page: 'attendance' };
  }
  if (parts.length === 1 && parts[0] === 'find-event') {
    const query = new URLSearchParams(search).get('q') ?? undefined;
    return query ? { page: 'find-event', query } : { page: 'find-event' };
  }
  return { page: 'not-found' };
}

export function href(route: Route): string {
  const e = encodeURIComponent;
  switch (route.page) {
    case 'webhooks':
      return '#/webhooks';
    case 'new-webhook':
      return '#/webhooks/new';
    case 'webhook':
      return `#/webhooks/${e(route.id)}`;
    case 'delivery':
      return `#/webhooks/${e(route.webhookId)}/deliveries/${e(route.deliveryId)}`;
    case 'event-types':
      return '#/event-types';
    case 'inbound':
      return '#/inbound';
    case 'find-event':
      return route.query ? `#/find-event?q=${e(route.query)}` : '#/find-event';
    case 'reconciliations':
      return '#/reconciliations';
    case 'attendance':
      return route.uuid === undefined ? '#/attendance' : `#/attendance/${e(route.uuid)}`;
    case 'accounts':
      return '#/accounts';
    case 'not-found':
      return '#/webhooks';
  }
}
