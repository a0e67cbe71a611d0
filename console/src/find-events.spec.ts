import { Api } from './api';
import { LOOKUP_UNAVAILABLE, findEvents } from './find-events';

const ID = '9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d';
const event = (id: string, deliveries?: unknown[]) => ({
  id,
  event: 'job.started',
  created_at: '2026-01-01T09:30:00Z',
  data: {},
  source: { tracking_id: 'v=2.0;rid=WEB_1' },
  ...(deliveries ? { deliveries } : {}),
});

/** An API answering each path from a table; records the paths asked, in order. */
function apiAnswering(table: Record<string, { status: number; body: unknown }>) {
  const asked: string[] = [];
  const fetch = async (url: string) => {
    asked.push(url);
    const answer = table[url] ?? {
      status: 404,
      body: { statusCode: 404, error: 'Not Found', message: `Cannot GET ${url}` },
    };
    return Response.json(answer.body, { status: answer.status });
  };
  return { api: new Api({ token: 't', fetch }), asked };
}

const notFound = { status: 404, body: { statusCode: 404, message: 'Event not found' } };

describe('findEvents', () => {
  it('reads an event id straight away', async () => {
    const { api, asked } = apiAnswering({
      [`/api/events/${ID}`]: { status: 200, body: event(ID, []) },
    });
    expect((await findEvents(api, ` ${ID} `)).map((e) => e.id)).toEqual([ID]);
    expect(asked).toEqual([`/api/events/${ID}`]);
  });

  it('searches by tracking id, reading whole the events the list gives without deliveries', async () => {
    const other = '11111111-2222-4333-8444-555555555555';
    const { api, asked } = apiAnswering({
      '/api/events?tracking_id=v%3D2.0%3Brid%3DWEB_1': {
        status: 200,
        body: { data: [event(ID, []), event(other)], next_cursor: null },
      },
      [`/api/events/${other}`]: { status: 200, body: event(other, [{ id: 'd' }]) },
    });
    const found = await findEvents(api, 'v=2.0;rid=WEB_1');
    expect(found.map((e) => [e.id, e.deliveries?.length])).toEqual([
      [ID, 0],
      [other, 1],
    ]);
    expect(asked).toHaveLength(2);
  });

  it('tries a UUID as a tracking id when no event of the caller has that id', async () => {
    const { api, asked } = apiAnswering({
      [`/api/events/${ID}`]: notFound,
      [`/api/events?tracking_id=${ID}`]: { status: 200, body: { data: [], next_cursor: null } },
    });
    expect(await findEvents(api, ID)).toEqual([]);
    expect(asked).toEqual([`/api/events/${ID}`, `/api/events?tracking_id=${ID}`]);
  });

  it('says the lookup is unavailable when the service has no such route', async () => {
    const { api } = apiAnswering({});
    await expect(findEvents(api, ID)).rejects.toThrow(LOOKUP_UNAVAILABLE);
    await expect(findEvents(api, 'tracking')).rejects.toThrow(LOOKUP_UNAVAILABLE);
  });

  it("passes any other error on with the API's message", async () => {
    const { api } = apiAnswering({
      '/api/events?tracking_id=x': {
        status: 400,
        body: { statusCode: 400, message: 'tracking_id must be at most 200 characters' },
      },
    });
    await expect(findEvents(api, 'x')).rejects.toThrow(
      'tracking_id must be at most 200 characters',
    );
  });
});
