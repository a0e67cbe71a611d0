import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { meetingStarted, participantJoined } from '../scripts/platform/zoom-events';
import { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import { OperationalEventStore } from '../src/delivery-record/operational-events.store';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { sendZoomEvent } from './support/zoom-sender';

const SECRET = 'filters-and-headers-secret-0123';
const TOKEN_VALUE = 'Bearer receiver-credential-abcdef987654';

describe('filters and custom headers (docs/destinations.md)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let token: string;
  let db: DataSource;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp();
    token = await t.token('alpha');
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  const api = (method: string, path: string, body?: unknown) =>
    request(t.baseUrl, method, path, { token, body });

  async function webhook(extra: Json, events = ['job.started']): Promise<string> {
    const res = await api('POST', '/api/webhooks', {
      url: receiver.route({}, `w${randomUUID().slice(0, 8)}`).url,
      events,
      secret: SECRET,
      ...extra,
    });
    expect(res.status).toBe(201);
    return res.body.id as string;
  }

  /** The webhooks an event made deliveries for. */
  const deliveredTo = async (eventId: string): Promise<Set<string>> =>
    new Set(
      (await db.query(`SELECT webhook_id FROM deliveries WHERE event_id = $1`, [eventId])).map(
        (r: Json) => r.webhook_id as string,
      ),
    );

  describe('filters', () => {
    let prefix: string, inList: string, either: string, exists: string, none: string;
    let all: string[];

    beforeAll(async () => {
      await db.query(`UPDATE webhooks SET active = false`);
      prefix = await webhook({ filter: { 'data.topic': { $prefix: 'Sales' } } });
      inList = await webhook({ filter: { 'data.region': { $in: ['emea', 'apac'] } } });
      either = await webhook({
        filter: { $or: [{ 'data.topic': 'All hands' }, { 'data.duration': { $gt: 60 } }] },
      });
      exists = await webhook({ filter: { 'data.recording': { $exists: true } } });
      none = await webhook({});
      all = [prefix, inList, either, exists, none];
    });
    afterAll(() => db.query(`UPDATE webhooks SET active = false WHERE id = ANY($1)`, [all]));

    it.each([
      ['Sales sync', { region: 'emea', duration: 30 }, ['prefix', 'inList', 'none']],
      [
        'All hands',
        { region: 'amer', duration: 90, recording: null },
        ['either', 'exists', 'none'],
      ],
      ['Engineering', { region: 'apac', duration: 10 }, ['inList', 'none']],
      ['sales (lower case)', { region: 'amer', duration: 60 }, ['none']],
    ])(
      'publish() of "%s" makes deliveries for the matching webhooks only',
      async (topic, data, names) => {
        const byName: Record<string, string> = { prefix, inList, either, exists, none };
        const { eventId } = await t.app
          .get(DispatcherService)
          .publish({ kind: 'job.started', data: { topic, ...data } });
        expect(await deliveredTo(eventId)).toEqual(new Set(names.map((n) => byName[n])));
      },
    );

    it('the ingest statement (platform events published as they are stored) filters the same way', async () => {
      const send = async (topic: string) => {
        const uuid = `${randomUUID()}==`;
        const event = meetingStarted(uuid);
        (event.payload as Json).object.topic = topic;
        const res = await sendZoomEvent(t.baseUrl, event);
        expect(res.status).toBe(200);
        return waitFor(async () => {
          const [row] = await db.query(
            `SELECT id FROM events WHERE kind = 'job.started' AND data->>'uuid' = $1`,
            [uuid],
          );
          return row?.id as string | undefined;
        });
      };
      expect(await deliveredTo(await send('Sales pipeline review'))).toEqual(
        new Set([prefix, none]),
      );
      expect(await deliveredTo(await send('All hands'))).toEqual(new Set([either, none]));
    });

    it('a replay with missed: true counts an event the filter kept out as never missed', async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      const id = await webhook({ filter: { 'data.topic': { $prefix: 'Sales' } } });
      await api('PATCH', `/api/webhooks/${id}`, { active: false });
      const dispatcher = t.app.get(DispatcherService);
      await dispatcher.publish({ kind: 'job.started', data: { topic: 'Sales missed' } });
      await dispatcher.publish({ kind: 'job.started', data: { topic: 'Other, filtered out' } });
      await api('PATCH', `/api/webhooks/${id}`, { active: true });
      const replay = await api('POST', `/api/webhooks/${id}/replay`, { since, missed: true });
      expect(replay.status).toBe(202);
      expect(replay.body).toEqual({ count: 1 });
      const rows = await db.query(
        `SELECT e.data->>'topic' AS topic FROM deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.webhook_id = $1`,
        [id],
      );
      expect(rows).toEqual([{ topic: 'Sales missed' }]);
      await api('PATCH', `/api/webhooks/${id}`, { active: false });
    });

    it('a replay with missed: true goes by the filter of the time, not the one set since', async () => {
      const since = new Date(Date.now() - 1000).toISOString();
      const id = await webhook({ filter: { 'data.topic': { $prefix: 'Sales' } } });
      await api('PATCH', `/api/webhooks/${id}`, { active: false });
      const dispatcher = t.app.get(DispatcherService);
      for (const topic of ['Sales kept', 'Other 1', 'Other 2', 'Other 3', 'Other 4']) {
        await dispatcher.publish({ kind: 'job.started', data: { topic } });
      }
      const patched = await api('PATCH', `/api/webhooks/${id}`, { filter: null, active: true });
      expect(patched.status).toBe(200);
      const replay = await api('POST', `/api/webhooks/${id}/replay`, { since, missed: true });
      expect(replay.body).toEqual({ count: 1 });
      const rows = await db.query(
        `SELECT e.data->>'topic' AS topic FROM deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.webhook_id = $1`,
        [id],
      );
      expect(rows).toEqual([{ topic: 'Sales kept' }]);
      // An event published after the PATCH went by the new filter (none): it is delivered.
      const after = await dispatcher.publish({ kind: 'job.started', data: { topic: 'Later' } });
      expect((await deliveredTo(after.eventId)).has(id)).toBe(true);
      await api('PATCH', `/api/webhooks/${id}`, { active: false });
    });

    it('applies to operational (bridge.*) events too', async () => {
      const about = await webhook({});
      const takes = await webhook({ filter: { 'data.webhook_id': about } }, [
        'bridge.delivery.failed',
      ]);
      const declines = await webhook({ filter: { 'data.webhook_id': { $neq: about } } }, [
        'bridge.delivery.failed',
      ]);
      const unfiltered = await webhook({}, ['bridge.delivery.failed']);
      const eventId = randomUUID();
      const createdAt = new Date();
      const data = { delivery_id: randomUUID(), webhook_id: about };
      const refs = await t.app.get(OperationalEventStore).fanOut({
        id: eventId,
        kind: 'bridge.delivery.failed',
        createdAt,
        data,
        body: JSON.stringify({
          id: eventId,
          event: 'bridge.delivery.failed',
          created_at: createdAt.toISOString(),
          data,
        }),
        aboutWebhookId: about,
        traceContext: null,
      });
      expect(new Set(refs.map((r) => r.webhookId))).toEqual(new Set([takes, unfiltered]));
      expect(await deliveredTo(eventId)).toEqual(new Set([takes, unfiltered]));
      await db.query(`UPDATE webhooks SET active = false WHERE id = ANY($1)`, [
        [about, takes, declines, unfiltered],
      ]);
    });

    it('compares numbers past 2^53 exactly, by their digits as sent, and shows them so', async () => {
      // The JSON texts are written by hand: JSON.stringify of a JavaScript number rounds them.
      const withFilter = async (filterText: string, method = 'POST', id = ''): Promise<Json> => {
        const fields =
          method === 'POST'
            ? { url: receiver.route({}, 'big').url, events: ['follower.gained'], secret: SECRET }
            : {};
        const text = JSON.stringify({ ...fields, filter: '<filter>' }).replace(
          '"<filter>"',
          filterText,
        );
        const res = await api(method, `/api/webhooks${id}`, text);
        expect({ status: res.status, body: res.body }).toMatchObject({
          status: method === 'POST' ? 201 : 200,
        });
        return res;
      };
      const exact = (await withFilter('{"data.participant.user_id_num":{"$eq":9007199254740993}}'))
        .body.id as string;
      const above = (
        await withFilter('{"data.participant.user_id_num":{"$gt":9223372036854775806}}')
      ).body.id as string;
      const listed = (
        await withFilter('{"data.participant.user_id_num":{"$in":[12345678901234567891]}}')
      ).body.id as string;
      const mine = new Set([exact, above, listed]);
      const send = async (digits: string): Promise<Set<string>> => {
        const uuid = `${randomUUID()}==`;
        const event = participantJoined(uuid);
        (event.payload as Json).object.participant.user_id_num = '<n>';
        const res = await sendZoomEvent(t.baseUrl, JSON.stringify(event).replace('"<n>"', digits));
        expect(res.status).toBe(200);
        const eventId = await waitFor(async () => {
          const [row] = await db.query(
            `SELECT id FROM events WHERE kind = 'follower.gained' AND data->>'uuid' = $1`,
            [uuid],
          );
          return row?.id as string | undefined;
        });
        return new Set([...(await deliveredTo(eventId))].filter((id) => mine.has(id)));
      };
      try {
        expect(await send('9007199254740993')).toEqual(new Set([exact]));
        expect(await send('9007199254740992')).toEqual(new Set());
        expect(await send('9223372036854775807')).toEqual(new Set([above]));
        expect(await send('9223372036854775806')).toEqual(new Set());
        // Past 2^63 both, so `above` takes them; the list only its own (…890 rounds as …891 does).
        expect(await send('12345678901234567891')).toEqual(new Set([listed, above]));
        expect(await send('12345678901234567890')).toEqual(new Set([above]));
        // Answers show the digits as sent: GET, and PATCH's answer.
        const shown = await api('GET', `/api/webhooks/${exact}`);
        expect(shown.text).toContain(
          '"filter":{"data.participant.user_id_num":{"$eq":9007199254740993}}',
        );
        const patched = await withFilter(
          '{"data.participant.user_id_num":{"$lt":-9223372036854775809}}',
          'PATCH',
          `/${exact}`,
        );
        expect(patched.text).toContain(
          '"filter":{"data.participant.user_id_num":{"$lt":-9223372036854775809}}',
        );
        // A number jsonb keeps as text (an event's 1e400) no number of a filter can equal.
        for (const tooLong of ['1e400', '1e-400']) {
          const refused = await api(
            'PATCH',
            `/api/webhooks/${exact}`,
            `{"filter":{"data.participant.user_id_num":${tooLong}}}`,
          );
          expect({ status: refused.status, details: refused.body.details }).toEqual({
            status: 400,
            details: [{ field: 'filter', message: expect.stringContaining('too long to compare') }],
          });
        }
        expect(await send('-9223372036854775808')).toEqual(new Set());
        expect(await send('-9223372036854775810')).toEqual(new Set([exact]));
      } finally {
        await db.query(`UPDATE webhooks SET active = false WHERE id = ANY($1)`, [[...mine]]);
      }
    });

    it('shows the filter as set; PATCH replaces it, null removes it', async () => {
      const id = await webhook({ filter: { 'data.topic': 'A' } });
      expect((await api('GET', `/api/webhooks/${id}`)).body.filter).toEqual({ 'data.topic': 'A' });
      const replaced = await api('PATCH', `/api/webhooks/${id}`, {
        filter: { 'data.duration': { $gte: 5 } },
      });
      expect(replaced.body.filter).toEqual({ 'data.duration': { $gte: 5 } });
      const dispatcher = t.app.get(DispatcherService);
      const a = await dispatcher.publish({
        kind: 'job.started',
        data: { topic: 'A', duration: 1 },
      });
      expect((await deliveredTo(a.eventId)).has(id)).toBe(false);
      const removed = await api('PATCH', `/api/webhooks/${id}`, { filter: null });
      expect(removed.body.filter).toBeNull();
      const b = await dispatcher.publish({
        kind: 'job.started',
        data: { topic: 'B', duration: 1 },
      });
      expect((await deliveredTo(b.eventId)).has(id)).toBe(true);
      await api('PATCH', `/api/webhooks/${id}`, { active: false });
    });

    it.each([
      ['an unknown operator', { 'data.topic': { $regex: '^S' } }, '$regex'],
      ['a bad operand', { 'data.region': { $in: 'emea' } }, '$in'],
      ['an unknown combinator', { $nor: [{ a: 1 }] }, '$nor'],
      ['a filter that is not an object', ['data.topic'], 'object'],
      [
        'a filter deeper than 8 levels',
        { $not: { $not: { $not: { $not: { $not: { $not: { $not: { $not: { a: 1 } } } } } } } } },
        '8 levels',
      ],
      ['an empty filter in $or', { $or: [{}, { 'data.topic': 'a' }] }, '$or[0] is empty'],
      ['an empty $not', { $not: {} }, '$not is empty'],
      ['empty filters in $and', { $and: [{}, {}] }, '$and[0] is empty'],
      ['U+0000 in a value', { 'data.topic': 'a\u0000' }, 'U+0000'],
      ['U+0000 in a path', { 'data.\u0000': { $exists: true } }, 'U+0000'],
      ['an unpaired surrogate', { 'data.topic': { $suffix: 'x\ud800' } }, 'surrogate'],
    ])(
      'refuses %s: 400 naming filter and the operator, nothing written',
      async (_, filter, what) => {
        const [before] = await db.query(`SELECT count(*)::int AS n FROM webhooks`);
        const res = await api('POST', '/api/webhooks', {
          url: receiver.route({}, 'refused').url,
          events: ['job.started'],
          secret: SECRET,
          filter,
        });
        expect(res.status).toBe(400);
        expect(res.body.details).toEqual([
          { field: 'filter', message: expect.stringContaining(what) },
        ]);
        expect(res.body.details[0].message).toMatch(/^filter/);
        const [after] = await db.query(`SELECT count(*)::int AS n FROM webhooks`);
        expect(after.n).toBe(before.n);
        const patched = await api('PATCH', `/api/webhooks/${prefix}`, { filter });
        expect(patched.status).toBe(400);
      },
    );
  });

  // Nest deletes __proto__, constructor and prototype from bodies, and class-transformer skips
  // the names of Object.prototype's members: such a filter was stored as {} (every event).
  // JSON text, so that "__proto__" is a key and not an object literal's prototype.
  it.each([
    ['{"filter":{"constructor":1}}', 'filter.constructor'],
    ['{"filter":{"__proto__":{"$eq":1}}}', 'filter.__proto__'],
    ['{"filter":{"toString":1}}', 'filter.toString'],
    ['{"filter":{"data.topic":{"$eq":"x","constructor":1}}}', 'filter.data.topic.constructor'],
    ['{"filter":{"$or":[{"a":1},{"hasOwnProperty":1}]}}', 'filter.$or[1].hasOwnProperty'],
    ['{"headers":{"__proto__":"v"}}', 'headers.__proto__'],
    ['{"headers":{"constructor":"v"}}', 'headers.constructor'],
    ['{"headers":{"valueOf":"v"}}', 'headers.valueOf'],
  ])(
    'refuses %s (a key JavaScript objects own): 400 naming it, nothing written',
    async (text, field) => {
      const body = JSON.parse(text) as Json;
      const [before] = await db.query(`SELECT count(*)::int AS n FROM webhooks`);
      const res = await api('POST', '/api/webhooks', {
        url: receiver.route({}, 'refused').url,
        events: ['job.started'],
        secret: SECRET,
        ...body,
      });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ field, message: expect.stringContaining(field) }]);
      const [after] = await db.query(`SELECT count(*)::int AS n FROM webhooks`);
      expect(after.n).toBe(before.n);
    },
  );

  describe('custom headers', () => {
    it('are sent with every attempt (a retry too), masked in every answer, never in logs or in plain text in the database', async () => {
      await db.query(`UPDATE webhooks SET active = false`);
      const route = receiver.route({ statuses: [500, 200] }, 'with-headers');
      const res = await api('POST', '/api/webhooks', {
        url: route.url,
        events: ['job.started'],
        secret: SECRET,
        headers: { Authorization: TOKEN_VALUE, 'X-Tenant': 'acme' },
      });
      expect(res.status).toBe(201);
      expect(res.body.headers).toEqual({ Authorization: '****7654', 'X-Tenant': '****' });
      const id = res.body.id;
      expect((await api('GET', `/api/webhooks/${id}`)).body.headers).toEqual(res.body.headers);
      const list = await api('GET', '/api/webhooks?limit=100');
      expect(list.body.data.find((w: Json) => w.id === id).headers).toEqual(res.body.headers);

      await t.app.get(DispatcherService).publish({ kind: 'job.started', data: { n: 1 } });
      const [first, second] = await waitFor(() => {
        const got = receiver.requests(route.path);
        return got.length >= 2 && got;
      });
      for (const req of [first, second]) {
        expect(req.headers.authorization).toBe(TOKEN_VALUE);
        expect(req.headers['x-tenant']).toBe('acme');
      }
      expect([first.headers['x-service-attempt'], second.headers['x-service-attempt']]).toEqual([
        '1',
        '2',
      ]);

      const [row] = await db.query(
        `SELECT row_to_json(w)::text AS text FROM webhooks w WHERE id = $1`,
        [id],
      );
      expect(row.text).not.toContain('receiver-credential');
      expect(row.text).not.toContain('acme');
      expect(t.logs.join('\n')).not.toContain('receiver-credential');

      const removed = await api('PATCH', `/api/webhooks/${id}`, { headers: null });
      expect(removed.body.headers).toEqual({});
      await t.app.get(DispatcherService).publish({ kind: 'job.started', data: { n: 2 } });
      const third = await waitFor(() => receiver.requests(route.path)[2]);
      expect(third.headers.authorization).toBeUndefined();
      await api('PATCH', `/api/webhooks/${id}`, { active: false });
    });

    it.each([
      ['a reserved prefix', { 'X-Service-Extra': 'v' }, 'headers.X-Service-Extra'],
      ['a Standard Webhooks name', { 'webhook-id': 'v' }, 'headers.webhook-id'],
      ['host', { Host: 'example.com' }, 'headers.Host'],
      // A name that is no token is named whole, as a JSON string: a space or colon stays in it.
      ['a name that is not a token', { 'Bad Name': 'v' }, 'headers["Bad Name"]'],
      ['a name with a colon', { 'X-A: b': 'v' }, 'headers["X-A: b"]'],
      ['a name with a quote', { 'a"b': 'v' }, 'headers["a\\"b"]'],
      ['a value with a line break', { 'X-Bad': 'a\r\nInjected: 1' }, 'headers.X-Bad'],
      ['a value of 1,025 characters', { 'X-Long': 'x'.repeat(1025) }, 'headers.X-Long'],
      ['a value that is not a string', { 'X-Num': 1 }, 'headers.X-Num'],
      ['a name given twice', { 'X-A': '1', 'x-a': '2' }, 'headers.x-a'],
      ...['Expect', 'Upgrade', 'Keep-Alive', 'Connection', 'TE', 'Trailer', 'Transfer-Encoding']
        .concat(['Proxy-Connection'])
        .map((name): [string, Json, string] => [name, { [name]: 'v' }, `headers.${name}`]),
      ['a name of 257 characters', { ['X'.repeat(257)]: 'v' }, `headers.${'X'.repeat(61)}…`],
      [
        '21 headers',
        Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v'])),
        'headers',
      ],
    ])('refuses %s: 400 naming the header', async (_, headers, field) => {
      const res = await api('POST', '/api/webhooks', {
        url: receiver.route({}, 'refused').url,
        events: ['job.started'],
        secret: SECRET,
        headers,
      });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([{ field, message: expect.stringContaining(field) }]);
      expect(JSON.stringify(res.body)).not.toContain('Injected');
    });
  });
});
