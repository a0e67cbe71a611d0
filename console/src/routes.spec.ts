import { Route, href, parseRoute } from './routes';

describe('routes', () => {
  it.each<[string, Route]>([
    ['', { page: 'webhooks' }],
    ['#/webhooks', { page: 'webhooks' }],
    ['#/webhooks/new', { page: 'new-webhook' }],
    ['#/webhooks/w-1', { page: 'webhook', id: 'w-1' }],
    ['#/webhooks/w-1/deliveries/d-1', { page: 'delivery', webhookId: 'w-1', deliveryId: 'd-1' }],
    ['#/event-types', { page: 'event-types' }],
    ['#/find-event', { page: 'find-event' }],
    ['#/inbound', { page: 'inbound' }],
    ['#/attendance', { page: 'attendance' }],
    ['#/accounts', { page: 'accounts' }],
    ['#/attendance/%2Fab%2Bcd%3D%3D', { page: 'attendance', uuid: '/ab+cd==' }],
    ['#/find-event?q=a%20b', { page: 'find-event', query: 'a b' }],
    ['#/elsewhere', { page: 'not-found' }],
  ])('reads %s', (hash, route) => {
    expect(parseRoute(hash)).toEqual(route);
  });

  it('writes what it reads', () => {
    for (const route of [
      { page: 'webhook', id: 'a/b' },
      { page: 'delivery', webhookId: 'w', deliveryId: 'd' },
      { page: 'find-event', query: 'x&y z' },
      { page: 'attendance', uuid: '//a+b/=' },
    ] as Route[]) {
      expect(parseRoute(href(route))).toEqual(route);
    }
  });
});
