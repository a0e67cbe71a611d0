import { randomBytes } from 'node:crypto';
import { SecretCipherService } from '../src/webhooks/secret-cipher.service';
import { HttpResult, Json, RequestOptions, request } from './support/http';
import { queryDatabase } from './support/test-db';
import { ClientName, TestApp, startTestApp } from './support/test-app';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
// Loopback is fine here: these apps run with WEBHOOK_ALLOW_PRIVATE_URLS=true unless stated.
const RECEIVER = 'http://127.0.0.1:9/hooks';

/** Every secret handed to the API in this file; none may ever come back or reach a log. */
const secretsUsed: string[] = [];
const newSecret = (label = 'sec') => {
  const secret = `${label}-${randomBytes(12).toString('hex')}`;
  secretsUsed.push(secret);
  return secret;
};

/** Every response body seen in this file, checked for secrets at the end. */
const responses: string[] = [];

describe('subscription API (webhooks)', () => {
  let t: TestApp;
  const tokens = {} as Record<ClientName, string>;

  const call = async (
    method: string,
    path: string,
    options: RequestOptions & { as?: ClientName } = {},
  ): Promise<HttpResult> => {
    const res = await request(t.baseUrl, method, path, {
      token: tokens[options.as ?? 'alpha'],
      ...options,
    });
    responses.push(res.text);
    return res;
  };
  const create = async (body: Json = {}, as: ClientName = 'alpha'): Promise<Json> => {
    const res = await call('POST', '/api/webhooks', {
      as,
      body: { url: RECEIVER, events: ['job.started'], secret: newSecret(), ...body },
    });
    expect(res.status).toBe(201);
    return res.body;
  };
  const rowCount = async () =>
    Number(
      (await queryDatabase<{ n: string }>(t.database.url, 'SELECT count(*) AS n FROM webhooks'))[0]
        .n,
    );
  const storedRow = async (id: string) =>
    (
      await queryDatabase<Record<string, Json>>(
        t.database.url,
        'SELECT * FROM webhooks WHERE id = $1',
        [id],
      )
    )[0];

  beforeAll(async () => {
    t = await startTestApp();
    for (const name of ['alpha', 'beta', 'reader'] as const) tokens[name] = await t.token(name);
  });
  afterAll(() => t.close());

  describe('create, read, list, update, delete', () => {
    it('creates a webhook and returns exactly the documented fields', async () => {
      const secret = newSecret('create');
      const res = await call('POST', '/api/webhooks', {
        body: { url: RECEIVER, events: ['job.started', 'follower.gained'], secret },
      });
      expect(res.status).toBe(201);
      expect(Object.keys(res.body).sort()).toEqual([
        'active',
        'created_at',
        'destination',
        'disabled_at',
        'disabled_reason',
        'events',
        'filter',
        'headers',
        'id',
        'max_in_flight',
        'ordering',
        'previous_secret_expires_at',
        'rate_limit',
        'secret_hint',
        'template',
        'updated_at',
        'url',
      ]);
      expect(res.body).toMatchObject({
        url: RECEIVER,
        events: ['job.started', 'follower.gained'],
        active: true,
        secret_hint: secret.slice(-4),
        previous_secret_expires_at: null,
        disabled_reason: null,
        disabled_at: null,
        destination: { type: 'http' },
        filter: null,
        headers: {},
        ordering: 'none',
      });
      expect(res.body.id).toMatch(UUID);
      expect(res.body.created_at).toMatch(ISO_UTC);
      expect(res.body.updated_at).toMatch(ISO_UTC);

      const got = await call('GET', `/api/webhooks/${res.body.id}`);
      expect(got.status).toBe(200);
      expect(got.body).toEqual(res.body);
    });

    it('stores the secret encrypted: the column holds no plaintext, and decrypts to it', async () => {
      const secret = newSecret('stored');
      const webhook = await create({ secret });
      const row = await storedRow(webhook.id);
      expect(row.owner_client_id).toBe('alpha');
      expect(JSON.stringify(row)).not.toContain(secret);
      expect(row.secret_encrypted).not.toContain(secret.slice(4));
      expect(t.app.get(SecretCipherService).decrypt(row.secret_encrypted as string)).toBe(secret);
      expect(row.secret_hint).toBe(secret.slice(-4));
    });

    it('cuts secret_hint at characters, not UTF-16 units', async () => {
      const secret = `${newSecret('emoji')}😀x😀`;
      secretsUsed.push(secret);
      const webhook = await create({ secret });
      expect(webhook.secret_hint).toBe(`${secret.slice(-6, -5)}😀x😀`);
    });

    it('accepts the boundaries: a 2048-character url, 16- and 256-character secrets', async () => {
      const url = `${RECEIVER}/${'a'.repeat(2048 - RECEIVER.length - 1)}`;
      expect(url).toHaveLength(2048);
      for (const secret of ['s'.repeat(15) + 'A', 'S'.repeat(255) + 'B']) {
        secretsUsed.push(secret);
        const webhook = await create({ url, secret, events: ['operation.failed'] });
        expect(webhook.url).toBe(url);
      }
    });

    it('lists the caller’s webhooks newest first, with next_cursor null on the last page', async () => {
      const first = await create();
      const second = await create();
      const res = await call('GET', '/api/webhooks');
      expect(res.status).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['data', 'next_cursor']);
      expect(res.body.next_cursor).toBeNull();
      const ids = res.body.data.map((w: Json) => w.id);
      expect(ids.indexOf(second.id)).toBeLessThan(ids.indexOf(first.id));
      expect(res.body.data.find((w: Json) => w.id === first.id)).toEqual(first);
    });

    it('updates each field on its own and leaves the others as they were', async () => {
      const webhook = await create({ events: ['job.started'] });
      const urlRes = await call('PATCH', `/api/webhooks/${webhook.id}`, {
        body: { url: 'http://127.0.0.1:10/other' },
      });
      expect(urlRes.status).toBe(200);
      expect(urlRes.body).toMatchObject({
        url: 'http://127.0.0.1:10/other',
        events: ['job.started'],
        active: true,
        secret_hint: webhook.secret_hint,
        created_at: webhook.created_at,
      });
      expect(Date.parse(urlRes.body.updated_at)).toBeGreaterThanOrEqual(
        Date.parse(webhook.updated_at),
      );

      const eventsRes = await call('PATCH', `/api/webhooks/${webhook.id}`, {
        body: { events: ['operation.complete', 'operation.failed'] },
      });
      expect(eventsRes.body).toMatchObject({
        url: 'http://127.0.0.1:10/other',
        events: ['operation.complete', 'operation.failed'],
      });

      const secret = newSecret('rotated');
      const before = await storedRow(webhook.id);
      const secretRes = await call('PATCH', `/api/webhooks/${webhook.id}`, { body: { secret } });
      expect(secretRes.status).toBe(200);
      expect(secretRes.body.secret_hint).toBe(secret.slice(-4));
      const after = await storedRow(webhook.id);
      expect(after.secret_encrypted).not.toBe(before.secret_encrypted);
      expect(t.app.get(SecretCipherService).decrypt(after.secret_encrypted as string)).toBe(secret);

      const ordered = await call('PATCH', `/api/webhooks/${webhook.id}`, {
        body: { ordering: 'meeting' },
      });
      expect(ordered.body).toMatchObject({ ordering: 'meeting', active: true });
      const refused = await call('PATCH', `/api/webhooks/${webhook.id}`, {
        body: { ordering: 'event' },
      });
      expect(refused.status).toBe(400);
      expect(refused.body.details.map((d: Json) => d.field)).toEqual(['ordering']);

      const pause = await call('PATCH', `/api/webhooks/${webhook.id}`, { body: { active: false } });
      expect(pause.body).toMatchObject({ active: false, secret_hint: secret.slice(-4) });
      const resume = await call('PATCH', `/api/webhooks/${webhook.id}`, { body: { active: true } });
      expect(resume.body.active).toBe(true);
      expect((await call('GET', `/api/webhooks/${webhook.id}`)).body).toEqual(resume.body);
    });

    it('updates several fields at once', async () => {
      const webhook = await create();
      const res = await call('PATCH', `/api/webhooks/${webhook.id}`, {
        body: { events: ['follower.lost'], active: false, url: 'https://127.0.0.1/x' },
      });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({
        events: ['follower.lost'],
        active: false,
        url: 'https://127.0.0.1/x',
      });
    });

    it('deletes: 204 with no body, then 404 everywhere and gone from the list', async () => {
      const webhook = await create();
      const res = await call('DELETE', `/api/webhooks/${webhook.id}`);
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(await storedRow(webhook.id)).toBeUndefined();
      expect((await call('GET', `/api/webhooks/${webhook.id}`)).status).toBe(404);
      expect((await call('DELETE', `/api/webhooks/${webhook.id}`)).status).toBe(404);
      expect(
        (await call('PATCH', `/api/webhooks/${webhook.id}`, { body: { active: true } })).status,
      ).toBe(404);
      const list = await call('GET', '/api/webhooks?limit=100');
      expect(list.body.data.map((w: Json) => w.id)).not.toContain(webhook.id);
    });

    it('answers 404 in the error shape for a well-formed id that does not exist', async () => {
      for (const method of ['GET', 'DELETE']) {
        const res = await call(method, `/api/webhooks/${NIL_UUID}`);
        expect(res.status).toBe(404);
        expect(res.body).toEqual({
          statusCode: 404,
          error: 'Not Found',
          message: 'Webhook not found',
        });
      }
    });
  });

  describe('validation: 400 naming each bad field, nothing written', () => {
    const valid = () => ({ url: RECEIVER, events: ['job.started'], secret: newSecret('valid') });

    it.each<[string, (v: Json) => Json, string[]]>([
      ['an empty body', () => ({}), ['url', 'events', 'secret']],
      ['a missing url', ({ events, secret }) => ({ events, secret }), ['url']],
      ['a null url', (v) => ({ ...v, url: null }), ['url']],
      ['a url that is a number', (v) => ({ ...v, url: 42 }), ['url']],
      ['a url that is not a URL', (v) => ({ ...v, url: 'not a url' }), ['url']],
      ['a relative url', (v) => ({ ...v, url: '/hooks' }), ['url']],
      ['an ftp url', (v) => ({ ...v, url: 'ftp://127.0.0.1/x' }), ['url']],
      ['a javascript: url', (v) => ({ ...v, url: 'javascript:alert(1)' }), ['url']],
      ['a file: url', (v) => ({ ...v, url: 'file:///etc/passwd' }), ['url']],
      ['a url with credentials', (v) => ({ ...v, url: 'http://u:p@127.0.0.1/' }), ['url']],
      ['a url with a newline', (v) => ({ ...v, url: 'http://127.0.0.1/a\nb' }), ['url']],
      [
        'a url over 2048 characters',
        (v) => ({ ...v, url: `${RECEIVER}/${'a'.repeat(2048)}` }),
        ['url'],
      ],
      ['missing events', ({ url, secret }) => ({ url, secret }), ['events']],
      ['events not an array', (v) => ({ ...v, events: 'job.started' }), ['events']],
      ['empty events', (v) => ({ ...v, events: [] }), ['events']],
      ['an unknown event', (v) => ({ ...v, events: ['job.started', 'job.exploded'] }), ['events']],
      ['the test event', (v) => ({ ...v, events: ['webhook.test'] }), ['events']],
      ['an event that is a number', (v) => ({ ...v, events: [1] }), ['events']],
      ['duplicate events', (v) => ({ ...v, events: ['job.started', 'job.started'] }), ['events']],
      ['a missing secret', ({ url, events }) => ({ url, events }), ['secret']],
      ['a 15-character secret', (v) => ({ ...v, secret: 'fifteen-chars-x' }), ['secret']],
      ['a 257-character secret', (v) => ({ ...v, secret: 'x'.repeat(257) }), ['secret']],
      ['a secret that is a number', (v) => ({ ...v, secret: 1234567890123456 }), ['secret']],
      ['an unknown field', (v) => ({ ...v, owner_client_id: 'beta' }), ['owner_client_id']],
      ['active on create', (v) => ({ ...v, active: false }), ['active']],
      ['an unknown ordering', (v) => ({ ...v, ordering: 'sometimes' }), ['ordering']],
      ['a null ordering', (v) => ({ ...v, ordering: null }), ['ordering']],
      [
        'three bad fields at once',
        () => ({ url: 'ftp://x', events: ['nope'], secret: 'short-secret' }),
        ['url', 'events', 'secret'],
      ],
    ])('refuses %s', async (_, mutate, fields) => {
      const before = await rowCount();
      const res = await call('POST', '/api/webhooks', { body: mutate(valid()) });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.body.details.map((d: Json) => d.field).sort()).toEqual([...fields].sort());
      for (const detail of res.body.details) {
        expect(detail.message).toEqual(expect.stringContaining(detail.field));
      }
      expect(await rowCount()).toBe(before);
    });

    it('names the unknown event and the allowed ones', async () => {
      const res = await call('POST', '/api/webhooks', {
        body: { ...valid(), events: ['job.exploded'] },
      });
      expect(res.body.details[0].message).toMatch(/"job\.exploded".*allowed: job\.started/);
    });

    it('does not repeat a too-short secret in the error', async () => {
      const secret = 'tiny-secret-7';
      secretsUsed.push(secret);
      const res = await call('POST', '/api/webhooks', { body: { ...valid(), secret } });
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(secret);
    });

    it('refuses a body that is not a JSON object', async () => {
      for (const body of ['[]', '"a string"', 'null']) {
        const res = await call('POST', '/api/webhooks', { body });
        expect(res.status).toBe(400);
      }
      const before = await rowCount();
      const form = await call('POST', '/api/webhooks', {
        body: `url=${encodeURIComponent(RECEIVER)}&events=job.started&secret=${newSecret('form')}`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      expect(form.status).toBe(415);
      expect(form.body.message).toContain('send Content-Type: application/json');
      expect(await rowCount()).toBe(before);
    });

    it.each(['not a url', '/hooks', 'hooks.example.com/x', 'http://127.0.0.1/a\nb'])(
      'says the url %j must be an absolute http or https URL',
      async (url) => {
        const res = await call('POST', '/api/webhooks', { body: { ...valid(), url } });
        expect(res.status).toBe(400);
        expect(res.body.details).toEqual([
          {
            field: 'url',
            message: expect.stringMatching(/^url must be an absolute http or https URL/),
          },
        ]);
      },
    );

    it.each<[string, Json, string[]]>([
      ['an empty body', {}, ['body']],
      ['a null url', { url: null }, ['url']],
      ['a null active', { active: null }, ['active']],
      ['active as a string', { active: 'false' }, ['active']],
      ['an ftp url', { url: 'ftp://127.0.0.1/' }, ['url']],
      ['empty events', { events: [] }, ['events']],
      ['duplicate events', { events: ['follower.lost', 'follower.lost'] }, ['events']],
      ['a short secret', { secret: 'short' }, ['secret']],
      ['a change of owner', { owner_client_id: 'beta' }, ['owner_client_id']],
      ['a change of id', { id: NIL_UUID }, ['id']],
      ['a change of secret_hint', { secret_hint: 'abcd' }, ['secret_hint']],
      ['a valid field with a bad one', { active: false, events: ['x'] }, ['events']],
    ])('PATCH refuses %s and changes nothing', async (_, body, fields) => {
      const webhook = await create();
      const rowBefore = await storedRow(webhook.id);
      const res = await call('PATCH', `/api/webhooks/${webhook.id}`, { body });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: Json) => d.field).sort()).toEqual([...fields].sort());
      expect(await storedRow(webhook.id)).toEqual(rowBefore);
    });

    it.each(['not-a-uuid', '123', `${NIL_UUID}0`, "1' OR '1'='1"])(
      'answers 400 naming id for the bad id %j on every :id route',
      async (id) => {
        const path = `/api/webhooks/${encodeURIComponent(id)}`;
        for (const [method, body] of [
          ['GET', undefined],
          ['PATCH', { active: false }],
          ['DELETE', undefined],
        ] as const) {
          const res = await call(method, path, { body });
          expect(res.status).toBe(400);
          expect(res.body.details).toEqual([{ field: 'id', message: 'id must be a UUID' }]);
        }
      },
    );

    it.each<[string, string]>([
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=', 'limit'],
      ['limit=1e1', 'limit'],
      ['limit=2&limit=3', 'limit'],
      ['cursor=not-a-cursor', 'cursor'],
      [`cursor=${Buffer.from('["x","y"]').toString('base64url')}`, 'cursor'],
      ['cursor=a&cursor=b', 'cursor'],
      [
        `cursor=${Buffer.from(`["2020-01-01T00:00:00.000Z","${'-'.repeat(36)}"]`).toString('base64url')}`,
        'cursor',
      ],
      [`cursor=${Buffer.from(`["March 7, 20200","${NIL_UUID}"]`).toString('base64url')}`, 'cursor'],
      [`cursor=${Buffer.from(`["2020-01-01","${NIL_UUID}"]`).toString('base64url')}`, 'cursor'],
      ['offset=10', 'offset'],
    ])('list refuses ?%s naming %s', async (query, field) => {
      const res = await call('GET', `/api/webhooks?${query}`);
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: Json) => d.field)).toEqual([field]);
    });
  });

  describe('ownership: another client’s webhook does not exist for you', () => {
    let alphas: Json;

    beforeAll(async () => {
      alphas = await create({ events: ['job.completed'] }, 'alpha');
    });

    it('GET, PATCH and DELETE answer beta exactly as for an absent id, and change nothing', async () => {
      const absent = await call('GET', `/api/webhooks/${NIL_UUID}`, { as: 'beta' });
      const rowBefore = await storedRow(alphas.id);
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { active: false, url: 'http://127.0.0.1:11/stolen' }],
        ['DELETE', undefined],
      ] as const) {
        const res = await call(method, `/api/webhooks/${alphas.id}`, { as: 'beta', body });
        expect(res.status).toBe(404);
        expect(res.body).toEqual(absent.body);
      }
      expect(await storedRow(alphas.id)).toEqual(rowBefore);
      expect((await call('GET', `/api/webhooks/${alphas.id}`, { as: 'alpha' })).body).toEqual(
        alphas,
      );
    });

    it('lists never show another client’s webhooks', async () => {
      const betas = await create({}, 'beta');
      const listOf = async (as: ClientName) => {
        const ids: string[] = [];
        let cursor: string | null = null;
        do {
          const query: string = cursor ? `&cursor=${cursor}` : '';
          const res = await call('GET', `/api/webhooks?limit=100${query}`, { as });
          ids.push(...res.body.data.map((w: Json) => w.id));
          cursor = res.body.next_cursor;
        } while (cursor);
        return ids;
      };
      const [alphaIds, betaIds] = [await listOf('alpha'), await listOf('beta')];
      expect(alphaIds).toContain(alphas.id);
      expect(alphaIds).not.toContain(betas.id);
      expect(betaIds).toContain(betas.id);
      expect(betaIds).not.toContain(alphas.id);
      const owners = await queryDatabase<{ owner_client_id: string }>(
        t.database.url,
        'SELECT owner_client_id FROM webhooks WHERE id = ANY($1::uuid[])',
        [betaIds],
      );
      expect(new Set(owners.map((o) => o.owner_client_id))).toEqual(new Set(['beta']));
    });

    it('a cursor taken from one client’s list does not reveal another’s webhooks', async () => {
      const alphaPage = await call('GET', '/api/webhooks?limit=1', { as: 'alpha' });
      expect(alphaPage.body.next_cursor).toEqual(expect.any(String));
      const res = await call(
        'GET',
        `/api/webhooks?limit=100&cursor=${alphaPage.body.next_cursor}`,
        { as: 'beta' },
      );
      expect(res.status).toBe(200);
      expect(res.body.data.map((w: Json) => w.id)).not.toContain(alphas.id);
      for (const w of res.body.data) expect((await storedRow(w.id)).owner_client_id).toBe('beta');
    });
  });

  describe('scopes', () => {
    it('lets a webhooks:read token read but not write', async () => {
      const webhook = await create();
      const alphas = await create({}, 'alpha');
      expect((await call('GET', '/api/webhooks', { as: 'reader' })).status).toBe(200);
      expect((await call('GET', `/api/webhooks/${alphas.id}`, { as: 'reader' })).status).toBe(404);
      for (const [method, path, body] of [
        ['POST', '/api/webhooks', { url: RECEIVER, events: ['job.started'], secret: newSecret() }],
        ['PATCH', `/api/webhooks/${webhook.id}`, { active: false }],
        ['DELETE', `/api/webhooks/${webhook.id}`, undefined],
      ] as const) {
        const res = await call(method, path, { as: 'reader', body });
        expect(res.status).toBe(403);
        expect(res.body).toEqual({
          statusCode: 403,
          error: 'Forbidden',
          message: 'The token lacks scope webhooks:write',
        });
      }
      expect((await call('GET', `/api/webhooks/${webhook.id}`)).body.active).toBe(true);
    });

    it('answers 401 before looking at the id or the body', async () => {
      for (const [method, path] of [
        ['POST', '/api/webhooks'],
        ['GET', '/api/webhooks?limit=0'],
        ['GET', '/api/webhooks/not-a-uuid'],
        ['PATCH', `/api/webhooks/${NIL_UUID}`],
        ['DELETE', `/api/webhooks/${NIL_UUID}`],
      ]) {
        const body = method === 'GET' ? undefined : { url: 'ftp://x' };
        const res = await request(t.baseUrl, method, path, { body });
        expect(res.status).toBe(401);
      }
    });
  });

  describe('Swagger (/docs-json)', () => {
    const routes: [string, string, string, string[]][] = [
      ['/api/webhooks', 'post', 'webhooks:write', ['400', '409']],
      ['/api/webhooks', 'get', 'webhooks:read', ['400']],
      ['/api/webhooks/{id}', 'get', 'webhooks:read', ['400', '404']],
      ['/api/webhooks/{id}', 'patch', 'webhooks:write', ['400', '404']],
      ['/api/webhooks/{id}', 'delete', 'webhooks:write', ['400', '404']],
      ['/api/webhooks/{id}/test', 'post', 'webhooks:write', ['400', '404', '409', '429']],
      [
        '/api/webhooks/{id}/deliveries/{deliveryId}/redeliver',
        'post',
        'webhooks:write',
        ['400', '404', '409'],
      ],
      ['/api/webhooks/{id}/replay', 'post', 'webhooks:write', ['400', '404', '409']],
      ['/api/webhooks/{id}/deliveries', 'get', 'webhooks:read', ['400', '404']],
      ['/api/webhooks/{id}/deliveries/{deliveryId}', 'get', 'webhooks:read', ['400', '404']],
    ];
    let doc: Json;
    beforeAll(async () => {
      doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    });

    it('lists exactly these webhook routes', () => {
      const documented = Object.entries(doc.paths as Record<string, Json>)
        .filter(([path]) => path.startsWith('/api/webhooks'))
        .flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
      expect(documented.sort()).toEqual(routes.map(([path, method]) => `${method} ${path}`).sort());
    });

    it.each(routes)(
      '%s %s declares oauth2 %s and its error answers %j',
      (path, method, scope, errors) => {
        const op = doc.paths[path][method];
        const oauth2 = op.security.filter((s: Json) => s.oauth2).map((s: Json) => s.oauth2);
        expect(oauth2).toEqual([[scope]]);
        for (const status of errors) {
          const content = op.responses[status]?.content?.['application/json'];
          expect({ status, schema: content?.schema }).toEqual({
            status,
            schema: { $ref: '#/components/schemas/ErrorResponse' },
          });
          // One example, or several named ones (test/swagger-examples checks each in full).
          const examples = content.examples
            ? Object.values(content.examples as Record<string, Json>).map((e) => e.value)
            : [content.example];
          for (const example of examples) {
            expect({ status, example: example?.statusCode }).toEqual({
              status,
              example: Number(status),
            });
          }
        }
      },
    );

    it.each([
      // url: required for an http destination only (docs/destinations.md).
      [
        '/api/webhooks',
        'post',
        'CreateWebhookDto',
        ['events', 'secret'],
        ['destination', 'filter', 'headers', 'ordering', 'template'],
      ],
      [
        '/api/webhooks/{id}',
        'patch',
        'UpdateWebhookDto',
        [],
        ['active', 'destination', 'filter', 'headers', 'ordering', 'template'],
      ],
    ])(
      '%s %s takes a %s body, every field with an example',
      (path, method, dto, required, extra) => {
        const body = doc.paths[path][method].requestBody;
        expect(body.required).toBe(true);
        expect(body.content['application/json'].schema).toEqual({
          $ref: `#/components/schemas/${dto}`,
        });
        const schema = doc.components.schemas[dto];
        expect(schema.required ?? []).toEqual(required);
        const fields = Object.entries(schema.properties as Record<string, Json>);
        expect(fields.map(([name]) => name).sort()).toEqual(
          ['url', 'events', 'secret', 'max_in_flight', 'rate_limit', ...extra].sort(),
        );
        for (const [name, field] of fields) {
          expect({ name, example: field.example !== undefined }).toEqual({ name, example: true });
        }
        // The example events are ones the API accepts: named kinds, or zoom.<event> names.
        const [named, pattern] = schema.properties.events.items.anyOf;
        expect(named.enum).toEqual(expect.arrayContaining(['zoom.*', 'job.started']));
        expect(pattern.pattern).toBe('^zoom\\.[a-z0-9_]+\\.[a-z0-9_]+$');
        for (const event of schema.properties.events.example as string[]) {
          expect(named.enum.includes(event) || new RegExp(pattern.pattern).test(event)).toBe(true);
        }
        // docs/receiving.md#ordered-delivery-per-meeting: the two values, the default, and what they mean.
        expect(schema.properties.ordering).toMatchObject({
          enum: ['none', 'meeting'],
          default: 'none',
          description: expect.stringContaining('x-service-ordering: late'),
        });
        expect(doc.components.schemas.WebhookResponse.properties.ordering).toMatchObject({
          enum: ['none', 'meeting'],
        });
      },
    );
  });

  describe('pagination', () => {
    it('walks more items than one page without duplicates or gaps, ties in one millisecond included', async () => {
      const created: Json[] = [];
      for (let i = 0; i < 7; i++) created.push(await create({}, 'beta'));
      // Five of the seven share one millisecond: only the id orders them.
      await queryDatabase(
        t.database.url,
        `UPDATE webhooks SET created_at = '2020-01-01T00:00:00.123Z' WHERE id = ANY($1::uuid[])`,
        [created.slice(1, 6).map((w) => w.id)],
      );
      const expected = (
        await queryDatabase<{ id: string }>(
          t.database.url,
          `SELECT id FROM webhooks WHERE owner_client_id = 'beta' ORDER BY created_at DESC, id DESC`,
        )
      ).map((r) => r.id);
      expect(expected.length).toBeGreaterThan(6);

      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const query: string = cursor ? `&cursor=${cursor}` : '';
        const res = await call('GET', `/api/webhooks?limit=3${query}`, { as: 'beta' });
        expect(res.status).toBe(200);
        expect(res.body.data.length).toBeLessThanOrEqual(3);
        seen.push(...res.body.data.map((w: Json) => w.id));
        cursor = res.body.next_cursor;
        pages++;
      } while (cursor && pages < 50);
      expect(seen).toEqual(expected);
      expect(new Set(seen).size).toBe(seen.length);
      expect(pages).toBe(Math.ceil(expected.length / 3));
    });

    it('does not repeat or skip items when a webhook is created between pages', async () => {
      const all = async () =>
        (
          await queryDatabase<{ id: string }>(
            t.database.url,
            `SELECT id FROM webhooks WHERE owner_client_id = 'beta' ORDER BY created_at DESC, id DESC`,
          )
        ).map((r) => r.id);
      const first = await call('GET', '/api/webhooks?limit=2', { as: 'beta' });
      const before = await all();
      const fresh = await create({}, 'beta');
      const rest = await call('GET', `/api/webhooks?limit=100&cursor=${first.body.next_cursor}`, {
        as: 'beta',
      });
      const seen = [...first.body.data, ...rest.body.data].map((w: Json) => w.id);
      expect(seen).toEqual(before);
      expect(seen).not.toContain(fresh.id);
    });

    it('defaults to 50 per page and allows up to 100', async () => {
      await queryDatabase(
        t.database.url,
        `INSERT INTO webhooks (owner_client_id, url, events, secret_encrypted, secret_hint)
         SELECT 'beta', $1, ARRAY['job.started'], 'v1.x.x.x', 'xxxx' FROM generate_series(1, 110)`,
        [RECEIVER],
      );
      const byDefault = await call('GET', '/api/webhooks', { as: 'beta' });
      expect(byDefault.body.data).toHaveLength(50);
      expect(byDefault.body.next_cursor).toEqual(expect.any(String));
      const most = await call('GET', '/api/webhooks?limit=100', { as: 'beta' });
      expect(most.body.data).toHaveLength(100);
    });
  });

  describe('secrets', () => {
    it('never returns a secret in any response of this file', () => {
      expect(responses.length).toBeGreaterThan(100);
      const all = responses.join('\n');
      for (const secret of secretsUsed) expect(all).not.toContain(secret);
    });

    it('never writes a secret to the logs', () => {
      expect(t.logs.length).toBeGreaterThan(100);
      expect(t.logs.some((l) => l.includes('/api/webhooks'))).toBe(true);
      const all = t.logs.join('\n');
      for (const secret of secretsUsed) expect(all).not.toContain(secret);
    });
  });
});

describe('SSRF: private and special addresses (WEBHOOK_ALLOW_PRIVATE_URLS=false)', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } });
    token = await t.token('alpha');
  });
  afterAll(() => t.close());

  const body = (url: string) => ({ url, events: ['job.started'], secret: newSecret('ssrf') });

  it.each([
    ['http://127.0.0.1/hook', '127.0.0.1'],
    ['http://10.0.0.1/hook', '10.0.0.1'],
    ['http://[::1]:8080/hook', '::1'],
    ['http://169.254.169.254/latest/meta-data/', '169.254.169.254'],
    ['http://localhost:3000/hook', 'localhost'],
    ['http://192.168.1.20/hook', '192.168.1.20'],
    ['http://100.64.0.1/hook', '100.64.0.1'],
    ['http://[fd00::1]/hook', 'fd00::1'],
    ['http://0.0.0.0/hook', '0.0.0.0'],
    // The URL parser reads these as 127.0.0.1 and ::ffff:7f00:1.
    ['http://0x7f000001/hook', '127.0.0.1'],
    ['http://2130706433/hook', '127.0.0.1'],
    ['http://[::ffff:127.0.0.1]/hook', '::ffff:7f00:1'],
  ])('refuses %s with 400 naming url, and stores nothing', async (url, host) => {
    const res = await request(t.baseUrl, 'POST', '/api/webhooks', { token, body: body(url) });
    expect(res.status).toBe(400);
    expect(res.body.details).toEqual([
      { field: 'url', message: expect.stringContaining('private or special-purpose address') },
    ]);
    expect(res.body.details[0].message).toContain(host);
    expect(res.body.details[0].message).toContain(
      'unless the service runs with WEBHOOK_ALLOW_PRIVATE_URLS=true',
    );
    const rows = await queryDatabase(t.database.url, 'SELECT id FROM webhooks WHERE url = $1', [
      url,
    ]);
    expect(rows).toEqual([]);
  });

  it('accepts a public address, and refuses a PATCH that points it at a private one', async () => {
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: body('https://93.184.216.34/hook'),
    });
    expect(created.status).toBe(201);
    for (const url of ['http://127.0.0.1/hook', 'http://169.254.169.254/', 'http://localhost/']) {
      const res = await request(t.baseUrl, 'PATCH', `/api/webhooks/${created.body.id}`, {
        token,
        body: { url, active: false },
      });
      expect(res.status).toBe(400);
      expect(res.body.details.map((d: Json) => d.field)).toEqual(['url']);
    }
    const now = await request(t.baseUrl, 'GET', `/api/webhooks/${created.body.id}`, { token });
    expect(now.body).toEqual(created.body);
  });

  it('does not re-check the URL when a PATCH leaves it alone', async () => {
    const created = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: body('https://93.184.216.34/other'),
    });
    const res = await request(t.baseUrl, 'PATCH', `/api/webhooks/${created.body.id}`, {
      token,
      body: { events: ['job.completed'] },
    });
    expect(res.status).toBe(200);
    expect(res.body.events).toEqual(['job.completed']);
  });
});
