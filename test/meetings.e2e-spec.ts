import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PLATFORM_OPERATIONS, scopeOf } from '../src/platform-api/platform-operations';
import { FakeUser, FakeZoom } from './support/fake-zoom';
import { Json, RequestOptions, request } from './support/http';
import { TestApp, scopesOfBut, startTestApp } from './support/test-app';

const TIMEOUT_MS = 1500;

/** An HTTP request with its path sent exactly as written (no dot-segment resolution). */
function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body: unknown,
): Promise<{ status: number; body: Json }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(baseUrl);
    const req = httpRequest(
      {
        hostname,
        port,
        path,
        method,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') as Json,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('meeting passthrough (docs/api.md#platform-passthrough)', () => {
  let fake: FakeZoom;
  let t: TestApp;
  let token: string;
  let host: FakeUser;

  const api = (method: string, path: string, options: RequestOptions = {}) =>
    request(t.baseUrl, method, path, { token, ...options });

  beforeAll(async () => {
    fake = await FakeZoom.start();
    t = await startTestApp({ env: { ...fake.env(), ZOOM_TIMEOUT_MS: String(TIMEOUT_MS) } });
    token = await t.token();
    host = fake.addUser({ email: 'host@example.com' });
    for (let i = 0; i < 4; i++) fake.addUser();
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  describe('server-to-server token', () => {
    it('requests one token for a burst of 20 concurrent calls on a cold cache', async () => {
      expect(fake.tokenRequests).toBe(0);
      const answers = await Promise.all(
        Array.from({ length: 20 }, () => api('GET', '/api/users?page_size=2')),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(fake.tokenRequests).toBe(1);
      expect(fake.apiRequests()).toHaveLength(20);
    });

    it('asks {ZOOM_OAUTH_URL}/oauth/token with Basic credentials and an account_credentials form', () => {
      const [tokenRequest] = fake.requests.filter((r) => r.rawPath === '/oauth/token');
      expect(tokenRequest.method).toBe('POST');
      expect(tokenRequest.headers.authorization).toBe(
        `Basic ${Buffer.from(`${fake.clientId}:${fake.clientSecret}`).toString('base64')}`,
      );
      expect(tokenRequest.headers['content-type']).toBe('application/x-www-form-urlencoded');
      expect(Object.fromEntries(new URLSearchParams(tokenRequest.body))).toEqual({
        grant_type: 'account_credentials',
        account_id: fake.accountId,
      });
    });

    it("calls the token's api_url + /v2 (regional base), with the bearer token", () => {
      for (const call of fake.apiRequests()) {
        expect(call.base).toBe('/regional');
        expect(call.headers.authorization).toMatch(/^Bearer \S+$/);
      }
    });

    it('keeps using the cached token for many sequential calls', async () => {
      const before = fake.tokenRequests;
      for (let i = 0; i < 10; i++) {
        expect((await api('GET', '/api/users')).status).toBe(200);
      }
      expect(fake.tokenRequests).toBe(before);
    });

    it('renews the token once after an upstream 401 and retries the call once', async () => {
      const meeting = fake.addMeeting(host.id);
      const before = fake.tokenRequests;
      fake.revokeTokens();
      const res = await api('GET', `/api/meetings/${meeting.id}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: meeting.id, uuid: meeting.uuid, topic: meeting.topic });
      expect(fake.tokenRequests).toBe(before + 1);
      const calls = fake.apiRequests().filter((r) => r.apiPath === `/meetings/${meeting.id}`);
      expect(calls).toHaveLength(2);
      expect(calls[0].headers.authorization).not.toBe(calls[1].headers.authorization);
    });

    it('renews only once when a burst of 20 calls all meet the revoked token', async () => {
      const before = fake.tokenRequests;
      const apiBefore = fake.apiRequests().length;
      fake.revokeTokens();
      const answers = await Promise.all(Array.from({ length: 20 }, () => api('GET', '/api/users')));
      expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
      expect(fake.tokenRequests).toBe(before + 1);
      // How many calls met the revoked token depends on when the renewal landed; each of those
      // was retried once with the fresh token, and every call ended on the fresh token.
      const byToken = new Map<string, number>();
      for (const call of fake.apiRequests().slice(apiBefore)) {
        const auth = String(call.headers.authorization);
        byToken.set(auth, (byToken.get(auth) ?? 0) + 1);
      }
      const [stale, fresh] = [...byToken.values()];
      expect(byToken.size).toBe(2);
      expect(fresh).toBe(20);
      expect(stale).toBeGreaterThanOrEqual(1);
    });

    it('gives up after one renewal: a platform refusing every token gives 502 with its 401', async () => {
      const before = fake.tokenRequests;
      const apiBefore = fake.apiRequests().length;
      fake.refuseAllTokens();
      try {
        const res = await api('GET', '/api/users');
        expect(res.status).toBe(502);
        expect(res.body).toEqual({
          statusCode: 502,
          error: 'Bad Gateway',
          message: 'The meeting platform refused a freshly issued access token',
          upstream: { status: 401, code: 124, message: 'Invalid access token.' },
        });
        expect(fake.tokenRequests).toBe(before + 1);
        expect(fake.apiRequests().length - apiBefore).toBe(2);
      } finally {
        fake.refuseAllTokens(false);
      }
    });

    it('falls back to ZOOM_API_URL when the token carries no api_url', async () => {
      fake.regionPath = null;
      fake.revokeTokens();
      try {
        expect((await api('GET', '/api/users')).status).toBe(200);
        expect(fake.apiRequests().at(-1)?.base).toBe('/global');
      } finally {
        fake.regionPath = '/regional';
        fake.revokeTokens();
      }
      expect((await api('GET', '/api/users')).status).toBe(200);
      expect(fake.apiRequests().at(-1)?.base).toBe('/regional');
    });

    it('never writes the platform token or client secret to the logs', () => {
      const logs = t.logs.join('\n');
      expect(logs).not.toContain(fake.clientSecret);
      const bearer = fake.apiRequests().at(-1)?.headers.authorization?.slice('Bearer '.length);
      expect(bearer).toBeTruthy();
      expect(logs).not.toContain(bearer as string);
    });
  });

  describe('routes', () => {
    it('creates a meeting: 201 with the platform answer, body sent as given', async () => {
      const body = {
        topic: 'Weekly sync',
        type: 2,
        start_time: '2025-01-31T14:00:00Z',
        duration: 30,
        settings: { join_before_host: true, waiting_room: false },
      };
      const res = await api('POST', `/api/users/${host.email}/meetings`, { body });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({
        id: expect.any(Number),
        host_id: host.id,
        host_email: host.email,
        topic: 'Weekly sync',
        join_url: expect.any(String),
        start_url: expect.any(String),
      });
      const sent = fake.apiRequests().at(-1);
      expect(sent?.method).toBe('POST');
      expect(sent?.apiPath).toBe('/users/host%40example.com/meetings');
      expect(sent?.headers['content-type']).toBe('application/json');
      expect(JSON.parse(sent?.body ?? '')).toEqual(body);
    });

    it("lists a user's meetings, passing type and paging on", async () => {
      const res = await api('GET', `/api/users/${host.id}/meetings?type=scheduled&page_size=1`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ page_size: 1, total_records: expect.any(Number) });
      expect(res.body.meetings).toHaveLength(1);
      expect(res.body.next_page_token).not.toBe('');
      const sent = fake.apiRequests().at(-1);
      expect(Object.fromEntries(sent?.query ?? [])).toEqual({ type: 'scheduled', page_size: '1' });

      const next = await api(
        'GET',
        `/api/users/${host.id}/meetings?page_size=1&next_page_token=${res.body.next_page_token}`,
      );
      expect(next.status).toBe(200);
      expect(next.body.meetings[0].id).not.toBe(res.body.meetings[0].id);
    });

    it('encodes user ids in the path', async () => {
      const odd = fake.addUser({ email: 'a+b@example.com' });
      const res = await api('GET', `/api/users/${encodeURIComponent(odd.email)}/meetings`);
      expect(res.status).toBe(200);
      expect(fake.apiRequests().at(-1)?.apiPath).toBe('/users/a%2Bb%40example.com/meetings');
    });

    it('updates, ends and deletes a meeting, answering the platform 204s', async () => {
      const meeting = fake.addMeeting(host.id);
      const patched = await api('PATCH', `/api/meetings/${meeting.id}`, {
        body: { topic: 'Renamed', duration: 45 },
      });
      expect(patched.status).toBe(204);
      expect(patched.text).toBe('');
      expect(meeting).toMatchObject({ topic: 'Renamed', duration: 45 });

      const ended = await api('PUT', `/api/meetings/${meeting.id}/status`, {
        body: { action: 'end' },
      });
      expect(ended.status).toBe(204);
      expect(meeting.status).toBe('ended');
      expect(JSON.parse(fake.apiRequests().at(-1)?.body ?? '')).toEqual({ action: 'end' });

      const deleted = await api('DELETE', `/api/meetings/${meeting.id}`);
      expect(deleted.status).toBe(204);
      expect(meeting.deleted).toBe(true);
      expect(fake.apiRequests().at(-1)).toMatchObject({
        method: 'DELETE',
        apiPath: `/meetings/${meeting.id}`,
      });
    });

    it('lists users with status, page_size and next_page_token passed on', async () => {
      const first = await api('GET', '/api/users?status=active&page_size=2');
      expect(first.status).toBe(200);
      expect(first.body.users).toHaveLength(2);
      const second = await api(
        'GET',
        `/api/users?status=active&page_size=2&next_page_token=${first.body.next_page_token}`,
      );
      expect(second.body.users[0].id).not.toBe(first.body.users[0].id);
      expect(Object.fromEntries(fake.apiRequests().at(-1)?.query ?? [])).toEqual({
        status: 'active',
        page_size: '2',
        next_page_token: first.body.next_page_token,
      });
    });

    it('passes a platform 404 on with its code and message in upstream', async () => {
      const res = await api('GET', '/api/meetings/123');
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'Meeting does not exist: 123.',
        upstream: { status: 404, code: 3001, message: 'Meeting does not exist: 123.' },
      });
    });

    it('passes a platform 400 on with its field errors as details', async () => {
      fake.failNext(400, {
        code: 300,
        message: 'Validation Failed.',
        errors: [{ field: 'settings.waiting_room', message: 'Invalid field.' }],
      });
      const res = await api('POST', `/api/users/${host.id}/meetings`, { body: { topic: 'x' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        statusCode: 400,
        error: 'Bad Request',
        message: 'Validation Failed.',
        details: [{ field: 'settings.waiting_room', message: 'Invalid field.' }],
        upstream: { status: 400, code: 300, message: 'Validation Failed.' },
      });
    });

    it('passes a platform 500 on, with upstream', async () => {
      fake.failNext(500, { code: 500, message: 'Internal error' });
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(500);
      expect(res.body.upstream).toEqual({ status: 500, code: 500, message: 'Internal error' });
    });
  });

  describe('meeting UUIDs in paths', () => {
    it.each([
      ['begins with /', '/ajXp112QmuoKj4854875==', '%252Fajxp'],
      ['contains //', 'ab//Xp112QmuoKj48548==', 'ab%252F%252F'],
    ])('double-encodes a UUID that %s', async (_case, uuid) => {
      const meeting = fake.addMeeting(host.id, { uuid });
      const res = await api('GET', `/api/meetings/${encodeURIComponent(uuid)}`);
      expect(res.status).toBe(200);
      expect(res.body.uuid).toBe(uuid);
      expect(fake.apiRequests().at(-1)?.apiPath).toBe(
        `/meetings/${encodeURIComponent(encodeURIComponent(uuid))}`,
      );
      expect(fake.apiRequests().at(-1)?.apiPath).toContain('%252F');
      expect(meeting.uuid).toBe(uuid);
    });

    it('encodes any other UUID once', async () => {
      const uuid = 'ab/Xp112QmuoKj4854875==';
      fake.addMeeting(host.id, { uuid });
      const res = await api('GET', `/api/meetings/${encodeURIComponent(uuid)}`);
      expect(res.status).toBe(200);
      expect(fake.apiRequests().at(-1)?.apiPath).toBe('/meetings/ab%2FXp112QmuoKj4854875%3D%3D');
    });
  });

  describe('validation happens before any platform call', () => {
    let before: number;
    beforeAll(() => {
      before = fake.requests.length;
    });
    afterAll(() => {
      // Not one of the refused requests below reached the platform (token endpoint included).
      expect(fake.requests.length).toBe(before);
    });

    const create = (body: unknown) => api('POST', `/api/users/${host.id}/meetings`, { body });

    it.each([
      [{ type: 4 }, 'type', 'type must be one of 1, 2, 3, 8'],
      [{ type: '2' }, 'type', 'type must be an integer'],
      [{ start_time: '2025-01-31T14:00:00' }, 'timezone', 'required when start_time is a local'],
      [{ start_time: '2025-01-31T14:00:00+01:00' }, 'start_time', 'a UTC time like'],
      [{ start_time: '2025-02-30T10:00:00Z' }, 'start_time', 'a UTC time like'],
      [{ start_time: 1738332000 }, 'start_time', 'start_time must be a string'],
      [{ duration: 1.5 }, 'duration', 'duration must be an integer'],
      [{ duration: '30' }, 'duration', 'duration must be an integer'],
      [{ topic: 5 }, 'topic', 'topic must be a string'],
      [{ password: 'x'.repeat(11) }, 'password', 'shorter than or equal to 10'],
      [{ agenda: 'x'.repeat(2001) }, 'agenda', 'shorter than or equal to 2000'],
      [{ settings: { join_before_host: 'yes' } }, 'settings.join_before_host', 'boolean'],
      [{ settings: { waiting_room: 1 } }, 'settings.waiting_room', 'boolean'],
      [{ settings: { auto_recording: 'tape' } }, 'settings.auto_recording', 'must be one of'],
      [{ settings: 'on' }, 'settings', 'settings must be an object'],
      [{ recurrence: { type: 9 } }, 'recurrence.type', 'must be one of 1, 2, 3'],
      [{ tracking_fields: [{ field: 3 }] }, 'tracking_fields[0].field', 'must be a string'],
      [{ topic: null }, 'topic', 'topic must be a string'],
      [{ settings: null }, 'settings', 'settings must be an object'],
      [{ start_time: null }, 'start_time', 'start_time must be a string'],
    ])('refuses create body %j naming %s', async (body, field, message) => {
      const res = await create(body);
      expect(res.status).toBe(400);
      expect(res.body.statusCode).toBe(400);
      expect(res.body.details).toEqual(
        expect.arrayContaining([{ field, message: expect.stringContaining(message) }]),
      );
    });

    it('names every bad field of one body at once', async () => {
      const res = await api('PATCH', '/api/meetings/123', {
        body: { type: 5, duration: 'long', settings: { host_video: 'on' }, extra: 1 },
      });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: { field: string }) => d.field).sort()).toEqual([
        'duration',
        'settings.host_video',
        'type',
      ]);
    });

    it.each([
      ['POST', 'me/meetings'],
      ['GET', 'ME/meetings'],
      ['GET', 'Me/recordings'],
      ['PATCH', 'me'],
      ['GET', 'me/webinars'],
    ])(
      'refuses %s userId in /api/users/%s, telling the caller to name the user',
      async (method, path) => {
        const res = await api(method, `/api/users/${path}`, {
          body: method === 'GET' ? undefined : { first_name: 'x' },
        });
        expect(res.status).toBe(400);
        expect(res.body.details).toEqual([
          {
            field: 'userId',
            message: expect.stringMatching(/account-level token.*user's id or e-mail address/),
          },
        ]);
      },
    );

    it.each([
      ['/api/users?page_size=301', 'page_size', 'page_size must not be greater than 300'],
      ['/api/users?page_size=abc', 'page_size', 'page_size must be an integer'],
      ['/api/users?page_size=1.5', 'page_size', 'page_size must be an integer'],
      ['/api/users?page_size=', 'page_size', 'page_size must be an integer'],
      ['/api/users?page_size=2&page_size=3', 'page_size', 'page_size must be given once'],
      ['/api/users?status=deleted', 'status', 'status must be one of active, inactive, pending'],
      ['/api/users/x/meetings?type=past', 'type', 'type must be one of'],
      ['/api/meetings/123?show_previous_occurrences=maybe', 'show_previous_occurrences', 'boolean'],
      ['/api/users/x/recordings?from=2025-1-1', 'from', 'yyyy-mm-dd'],
      ['/api/users/x/recordings?to=2025-02-30', 'to', 'yyyy-mm-dd'],
      ['/api/users/x/recordings?file_type=MP5', 'file_type', 'file_type must list only'],
      ['/api/meetings/x/recordings?file_type=', 'file_type', 'at least one file type'],
      ['/api/report/users?from=2025-01-01', 'to', 'to is required'],
      ['/api/meetings/%2E%2E%2Fusers', 'meetingId', 'meetingId must not be empty, "." or ".."'],
      ['/api/past_meetings/..%2F..%2Fusers', 'meetingId', 'must not be empty, "." or ".."'],
      ['/api/meetings/a%20b', 'meetingId', 'meetingId must be a meeting id (digits) or a meeting'],
      [`/api/meetings/${'1'.repeat(65)}`, 'meetingId', 'meetingId must be a meeting id'],
      ['/api/users/a%2Fb/meetings', 'userId', 'userId must be a user id or an e-mail address'],
    ])('refuses GET %s naming %s', async (path, field, message) => {
      const res = await api('GET', path);
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual(
        expect.arrayContaining([{ field, message: expect.stringContaining(message) }]),
      );
    });

    // Sent as written: fetch would resolve %2E%2E as a dot segment before sending it.
    it.each([
      ['POST', '/api/users/%2E%2E/meetings', 'userId'],
      ['GET', '/api/users/%2e%2E/meetings', 'userId'],
      ['GET', '/api/meetings/%2E%2E', 'meetingId'],
      ['GET', '/api/meetings/%2E/recordings', 'meetingId'],
      ['DELETE', '/api/users/../token', 'userId'],
    ])('refuses %s %s (a dot segment) naming %s', async (method, path, field) => {
      const res = await rawRequest(t.baseUrl, method, path, token, { topic: 'x' });
      expect(res.status).toBe(400);
      expect(res.body.details).toEqual([
        { field, message: `${field} must not be empty, "." or ".."` },
      ]);
    });

    it.each([{ action: 'start' }, { action: 5 }])('refuses status body %j', async (body) => {
      const res = await api('PUT', '/api/meetings/123/status', { body });
      expect(res.status).toBe(400);
      expect(res.body.details[0].field).toBe('action');
    });

    it('refuses a required body that is missing, and a body of the wrong type', async () => {
      const missing = await api('POST', '/api/users', {});
      expect(missing.status).toBe(400);
      expect(missing.body.details).toEqual([
        { field: 'body', message: 'body is required (application/json)' },
      ]);
      const text = await api('POST', '/api/users', {
        body: 'action=create',
        headers: { 'content-type': 'text/plain' },
      });
      expect(text.status).toBe(415);
      const array = await api('POST', `/api/users/${host.id}/meetings`, { body: [1] });
      expect(array.status).toBe(400);
      expect(array.body.details).toEqual([{ field: 'body', message: 'body must be an object' }]);
    });
    it('refuses a multipart upload over 1 MiB with 413, and one without its file part', async () => {
      const part = (name: string, bytes: number) =>
        `--b\r\ncontent-disposition: form-data; name="${name}"; filename="a.png"\r\n\r\n` +
        `${'x'.repeat(bytes)}\r\n--b--\r\n`;
      const headers = { 'content-type': 'multipart/form-data; boundary=b' };
      const big = await api('POST', `/api/users/${host.id}/picture`, {
        body: part('pic_file', 1024 * 1024 + 1),
        headers,
      });
      expect(big.status).toBe(413);
      const wrong = await api('POST', `/api/users/${host.id}/picture`, {
        body: part('picture', 10),
        headers,
      });
      expect(wrong.status).toBe(400);
      expect(wrong.body.details).toEqual([
        { field: 'pic_file', message: 'pic_file is required (a multipart/form-data part)' },
      ]);
    });
  });

  describe('documented fields and parameters reach the platform as sent', () => {
    it('passes on the create fields the first round refused, undocumented ones too', async () => {
      const body = {
        topic: 'Planning',
        type: 8,
        start_time: '2025-03-03T09:30:00',
        timezone: 'Europe/Paris',
        duration: 90,
        agenda: 'Quarterly planning',
        password: 'Zx8!pq',
        default_password: false,
        schedule_for: 'assistant@example.com',
        pre_schedule: false,
        recurrence: { type: 2, repeat_interval: 1, weekly_days: '2', end_times: 6 },
        tracking_fields: [{ field: 'cost_center', value: 'R&D' }],
        template_id: 'tmpl-1',
        settings: {
          host_video: true,
          participant_video: false,
          mute_upon_entry: true,
          auto_recording: 'cloud',
          alternative_hosts: 'cohost@example.com',
          approval_type: 2,
          breakout_room: { enable: true, rooms: [{ name: 'A', participants: ['a@example.com'] }] },
          waiting_room: true,
          a_setting_the_platform_added_since: { enabled: true },
        },
        a_field_the_platform_added_since: [1, 2, 3],
      };
      const res = await api('POST', `/api/users/${host.email}/meetings`, { body });
      expect(res.status).toBe(201);
      const sent = fake.apiRequests().at(-1);
      expect(sent?.apiPath).toBe('/users/host%40example.com/meetings');
      expect(JSON.parse(sent?.body ?? '')).toEqual(body);
    });

    it('passes a PATCH body on byte for byte (key order, big integers)', async () => {
      const meeting = fake.addMeeting(host.id);
      const raw =
        '{"topic":"Renamed","settings":{"host_video":true},"big_id":12345678901234567890}';
      const res = await api('PATCH', `/api/meetings/${meeting.id}`, {
        body: raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(204);
      expect(fake.apiRequests().at(-1)?.body).toBe(raw);
    });

    it('passes a JSON body on without the UTF-8 byte order mark it was sent with', async () => {
      const meeting = fake.addMeeting(host.id);
      const raw = '{"topic":"Renamed"}';
      const res = await api('PATCH', `/api/meetings/${meeting.id}`, {
        // Sent as UTF-8: the mark is the bytes EF BB BF.
        body: `\uFEFF${raw}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(204);
      expect(fake.apiRequests().at(-1)?.body).toBe(raw);
    });

    it.each([
      ['GET', '?occurrence_id=1648194360000&show_previous_occurrences=true'],
      ['PATCH', '?occurrence_id=1648194360000'],
      [
        'DELETE',
        '?occurrence_id=1648194360000&schedule_for_reminder=true&cancel_meeting_reminder=false',
      ],
    ])('%s /api/meetings/:id passes its query on as sent (%s)', async (method, query) => {
      const meeting = fake.addMeeting(host.id);
      const res = await api(method, `/api/meetings/${meeting.id}${query}`, {
        body: method === 'PATCH' ? { agenda: 'Only this occurrence' } : undefined,
      });
      expect(res.status).toBe(method === 'GET' ? 200 : 204);
      expect(fake.apiRequests().at(-1)).toMatchObject({
        method,
        rawUrl: `/regional/v2/meetings/${meeting.id}${query}`,
      });
    });

    it('passes undocumented query parameters on unchanged', async () => {
      const res = await api('GET', '/api/users?status=active&page_size=2&new_filter=a%20b&x=1&x=2');
      expect(res.status).toBe(200);
      expect(fake.apiRequests().at(-1)?.rawUrl).toBe(
        '/regional/v2/users?status=active&page_size=2&new_filter=a%20b&x=1&x=2',
      );
    });

    it("answers a 2xx with the platform's tracking id and rate-limit headers", async () => {
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-zm-trackingid')).toBe(fake.lastTrackingId);
      expect(res.headers.get('x-ratelimit-category')).toBe('Light');
      expect(res.headers.get('x-ratelimit-limit')).toBe('30');
      expect(res.headers.get('x-ratelimit-remaining')).toBe('29');
      const meeting = fake.addMeeting(host.id);
      const deleted = await api('DELETE', `/api/meetings/${meeting.id}`);
      expect(deleted.status).toBe(204);
      expect(deleted.headers.get('x-zm-trackingid')).toBe(fake.lastTrackingId);
      expect(deleted.headers.get('x-ratelimit-remaining')).toBe('29');
    });

    it('passes the tracking id on with an error answer too', async () => {
      const res = await api('GET', '/api/meetings/123');
      expect(res.status).toBe(404);
      expect(res.headers.get('x-zm-trackingid')).toBe(fake.lastTrackingId);
    });
  });

  describe('rate limits', () => {
    it('passes a 429 on with Retry-After and the X-RateLimit-* headers', async () => {
      fake.rateLimitNext(1, { retryAfter: '7', category: 'Medium', type: 'QPS', limit: '20' });
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(429);
      expect(res.headers.get('retry-after')).toBe('7');
      expect(res.headers.get('x-ratelimit-category')).toBe('Medium');
      expect(res.headers.get('x-ratelimit-type')).toBe('QPS');
      expect(res.headers.get('x-ratelimit-limit')).toBe('20');
      expect(res.headers.get('x-ratelimit-remaining')).toBe('0');
      expect(res.body).toEqual({
        statusCode: 429,
        error: 'Too Many Requests',
        message: expect.stringContaining('rate limit'),
        upstream: { status: 429, code: 429, message: expect.stringContaining('rate limit') },
      });
    });

    it('turns a Retry-After date into seconds', async () => {
      const at = new Date(Date.now() + 3600_000).toUTCString();
      fake.rateLimitNext(1, { retryAfter: at, type: 'Daily' });
      const res = await api('POST', `/api/users/${host.id}/meetings`, { body: { topic: 'x' } });
      expect(res.status).toBe(429);
      const seconds = Number(res.headers.get('retry-after'));
      expect(seconds).toBeGreaterThan(3590);
      expect(seconds).toBeLessThanOrEqual(3601);
      expect(res.headers.get('x-ratelimit-type')).toBe('Daily');
    });

    it.each([
      ['a per-second limit', 'QPS', 'Medium', 1],
      ['the per-minute Resource-intensive category', 'QPS', 'Resource-intensive', 60],
    ])(
      'computes Retry-After when the platform sent none: %s',
      async (_what, type, category, seconds) => {
        fake.rateLimitNext(1, { retryAfter: null, type, category });
        const res = await api('GET', '/api/users');
        expect(res.status).toBe(429);
        expect(res.headers.get('retry-after')).toBe(String(seconds));
        expect(res.headers.get('x-ratelimit-category')).toBe(category);
      },
    );

    it('computes Retry-After as the time to 00:00 UTC when a daily cap was hit', async () => {
      fake.rateLimitNext(1, { retryAfter: null, type: 'Daily-limit', category: 'Heavy' });
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(429);
      const day = 24 * 60 * 60;
      const untilMidnight = day - (Math.floor(Date.now() / 1000) % day);
      const seconds = Number(res.headers.get('retry-after'));
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(day);
      // Within a second or two of this clock (the fake's Date is whole seconds), modulo a day
      // in case midnight passed in between.
      const off = (seconds - untilMidnight + day) % day;
      expect(Math.min(off, day - off)).toBeLessThanOrEqual(2);
    });
  });

  describe('platform trouble', () => {
    it('answers 504 when the platform does not answer within ZOOM_TIMEOUT_MS', async () => {
      fake.stallNext(1);
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(504);
      expect(res.body).toEqual({
        statusCode: 504,
        error: 'Gateway Timeout',
        message: `The meeting platform did not answer within ${TIMEOUT_MS} ms`,
      });
      fake.release();
    });

    it('answers 504 when the token endpoint does not answer in time, and recovers', async () => {
      const before = fake.tokenRequests;
      fake.revokeTokens();
      fake.stallNext(1, (r) => r.rawPath === '/oauth/token');
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(504);
      expect(fake.tokenRequests).toBe(before + 1);
      fake.release();
      expect((await api('GET', '/api/users')).status).toBe(200);
      expect(fake.tokenRequests).toBe(before + 2);
    });

    it('answers 502 when the platform drops the connection', async () => {
      fake.resetNext(1);
      const res = await api('GET', '/api/users');
      expect(res.status).toBe(502);
      expect(res.body.message).toMatch(/^The meeting platform could not be reached/);
    });
  });

  describe('scopes', () => {
    it.each([
      ['POST', '/api/users/u1/meetings', 'meetings:write'],
      ['GET', '/api/users/u1/meetings', 'meetings:read'],
      ['GET', '/api/meetings/123', 'meetings:read'],
      ['PATCH', '/api/meetings/123', 'meetings:write'],
      ['DELETE', '/api/meetings/123', 'meetings:write'],
      ['PUT', '/api/meetings/123/status', 'meetings:write'],
      ['GET', '/api/users', 'users:read'],
      ['POST', '/api/users', 'users:write'],
      ['PUT', '/api/users/u1/status', 'users:write'],
      ['DELETE', '/api/users/u1', 'users:write'],
      ['GET', '/api/webinars/123/registrants', 'webinars:read'],
      ['POST', '/api/webinars/123/panelists', 'webinars:write'],
      ['GET', '/api/past_meetings/123/participants', 'meetings:read'],
      ['GET', '/api/report/daily', 'reports:read'],
    ] as const)('%s %s needs %s', async (method, path, scope) => {
      const before = fake.requests.length;
      const narrow = await t.token('alpha', scopesOfBut('alpha', scope));
      const body = method === 'PUT' ? { action: 'end' } : method === 'GET' ? undefined : {};
      const res = await request(t.baseUrl, method, path, { token: narrow, body });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(`The token lacks scope ${scope}`);
      const anonymous = await request(t.baseUrl, method, path, { body });
      expect(anonymous.status).toBe(401);
      expect(fake.requests.length).toBe(before);
    });
  });

  it('documents every platform operation in Swagger: scope, parameters, body schema, errors', async () => {
    const doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    for (const op of PLATFORM_OPERATIONS) {
      const path = `/api${op.path}`;
      const method = op.method.toLowerCase();
      const entry = doc.paths[path]?.[method];
      expect({ path, method, found: Boolean(entry) }).toEqual({ path, method, found: true });
      expect(entry.security).toEqual(expect.arrayContaining([{ oauth2: [scopeOf(op)] }]));
      const documented = (entry.parameters as { name: string; in: string }[])
        .filter((p) => p.in === 'path' || p.in === 'query')
        .map((p) => `${p.in} ${p.name}`);
      expect(documented).toEqual(
        expect.arrayContaining(op.parameters.map((p) => `${p.in} ${p.name}`)),
      );
      if (op.body) {
        const schema = entry.requestBody.content[op.body.contentType].schema;
        expect(Object.keys(schema.properties ?? {})).toEqual(
          Object.keys(op.body.schema.properties ?? {}),
        );
      }
      for (const status of ['400', '401', '403', '404', '429', '502', '503', '504']) {
        expect({ path, method, status, documented: Boolean(entry.responses[status]) }).toEqual({
          path,
          method,
          status,
          documented: true,
        });
      }
      expect(entry.responses['429'].headers['Retry-After']).toBeDefined();
    }
    const create = doc.paths['/api/users/{userId}/meetings'].post;
    const body = create.requestBody.content['application/json'].schema;
    for (const field of ['timezone', 'agenda', 'password', 'recurrence', 'schedule_for']) {
      expect(body.properties[field]).toBeDefined();
    }
    expect(body.properties.settings.properties.host_video).toEqual({ type: 'boolean' });
    const download = doc.paths['/api/meetings/{meetingId}/recordings/{fileId}/download'].get;
    expect(download.security).toEqual(expect.arrayContaining([{ oauth2: ['recordings:read'] }]));
    expect(download.responses['206']).toBeDefined();
  });
});

describe('meeting passthrough when the platform cannot be reached', () => {
  let t: TestApp;
  beforeAll(async () => {
    const port = await closedPort();
    t = await startTestApp({
      env: {
        ZOOM_ACCOUNT_ID: 'acc',
        ZOOM_CLIENT_ID: 'id',
        ZOOM_CLIENT_SECRET: 'secret',
        ZOOM_OAUTH_URL: `http://127.0.0.1:${port}`,
        ZOOM_API_URL: `http://127.0.0.1:${port}/v2`,
      },
    });
  });
  afterAll(() => t?.close());

  it('answers 502 naming the connection failure', async () => {
    const res = await request(t.baseUrl, 'GET', '/api/users', { token: await t.token() });
    expect(res.status).toBe(502);
    expect(res.body).toEqual({
      statusCode: 502,
      error: 'Bad Gateway',
      message: 'The meeting platform could not be reached (ECONNREFUSED)',
    });
  });
});

describe('meeting passthrough without platform credentials', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ZOOM_ACCOUNT_ID: 'acc' } });
  });
  afterAll(() => t?.close());

  it.each([
    ['GET', '/api/users'],
    ['GET', '/api/meetings/123'],
    ['GET', '/api/meetings/123/recordings/f1/download'],
  ])('%s %s answers 503 naming the missing variables', async (method, path) => {
    const res = await request(t.baseUrl, method, path, { token: await t.token() });
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'The meeting platform is not configured: set ZOOM_CLIENT_ID, ZOOM_CLIENT_SECRET',
    });
  });

  it('still validates first (400 before 503)', async () => {
    const res = await request(t.baseUrl, 'GET', '/api/users?page_size=0.5', {
      token: await t.token(),
    });
    expect(res.status).toBe(400);
  });
});
