import { request as httpRequest } from 'node:http';
import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { signZoomRequest } from '../src/zoom/webhook-signature';
import { FakeZoom } from './support/fake-zoom';
import { Json, request } from './support/http';
import { RecordedResponse, ResponseContract } from './support/response-contract';
import { TestApp, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';

/** A validator of the document's own schemas, OpenAPI 3.0 keywords tolerated. */
function schemaValidator(doc: Json): (pointer: string) => ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: Number.isSafeInteger });
  ajv.addSchema(doc, 'openapi');
  return (pointer) => ajv.compile({ $ref: `openapi${pointer}` });
}

interface Body {
  type: string;
  bytes: string;
}

const MULTIPART: Body = {
  type: 'multipart/form-data; boundary=b',
  bytes:
    '--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\nx\r\n--b--\r\n',
};

const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

describe('the published API document is exact (docs/api.md)', () => {
  let fake: FakeZoom;
  let t: TestApp;
  let doc: Json;
  let token: string;
  let validator: (pointer: string) => ValidateFunction;

  const bodySchema = (path: string, method: string) =>
    validator(`#/paths/${escape(path)}/${method}/requestBody/content/application~1json/schema`);

  beforeAll(async () => {
    fake = await FakeZoom.start();
    t = await startTestApp({ env: fake.env() });
    doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    token = await t.token();
    validator = schemaValidator(doc);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  // @nestjs/swagger writes the document into /docs/swagger-ui-init.js with String.replace, whose
  // replacement patterns $` and $' would splice the template into it: Swagger UI then shows
  // nothing. Descriptions say "a dollar sign" where they would quote one before a quote.
  it("serves a Swagger UI script that parses: no $` or $' in the document", async () => {
    expect(JSON.stringify(doc).match(/\$[`']/g)).toBeNull();
    const script = await fetch(`${t.baseUrl}/docs/swagger-ui-init.js`);
    expect(script.status).toBe(200);
    const text = await script.text();
    expect(() => new Function(text)).not.toThrow();
  });

  it('states the refusals of the webhook bodies: extra fields and an empty PATCH are refused by both', async () => {
    const create = {
      url: 'http://127.0.0.1:9/x',
      events: ['job.started'],
      secret: 'whsec_0123456789abcdef',
    };
    const validCreate = bodySchema('/api/webhooks', 'post');
    expect(validCreate(create)).toBe(true);
    expect(validCreate({ ...create, colour: 'blue' })).toBe(false);
    const refused = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: { ...create, colour: 'blue' },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.details.map((d: Json) => d.field)).toEqual(['colour']);

    const created = await request(t.baseUrl, 'POST', '/api/webhooks', { token, body: create });
    expect(created.status).toBe(201);
    const validPatch = bodySchema('/api/webhooks/{id}', 'patch');
    expect(validPatch({})).toBe(false);
    expect(validPatch({ active: false })).toBe(true);
    const empty = await request(t.baseUrl, 'PATCH', `/api/webhooks/${created.body.id}`, {
      token,
      body: {},
    });
    expect(empty.status).toBe(400);
  });

  it('accepts the replay example exactly as the document serves it', async () => {
    const schema = doc.components.schemas.ReplayDto;
    const example = {
      since: schema.properties.since.example,
      until: schema.properties.until.example,
    };
    expect(bodySchema('/api/webhooks/{id}/replay', 'post')(example)).toBe(true);
    const hook = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token,
      body: {
        url: 'http://127.0.0.1:9/replay',
        events: ['job.started'],
        secret: 'whsec_0123456789abcdef',
      },
    });
    const replay = await request(t.baseUrl, 'POST', `/api/webhooks/${hook.body.id}/replay`, {
      token,
      body: example,
    });
    expect({ status: replay.status, body: replay.body }).toEqual({
      status: 202,
      body: { count: 0 },
    });
  });

  it('types upstream.code as an integer and upstream.message as a string, and documents the passed-on statuses under default', () => {
    const upstream = doc.components.schemas.UpstreamError.properties;
    expect(upstream.code).toMatchObject({ type: 'integer', nullable: true });
    expect(upstream.message).toMatchObject({ type: 'string', nullable: true });
    const passthrough = doc.paths['/api/meetings/{meetingId}'].get.responses;
    expect(passthrough.default.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ErrorResponse',
    });
    expect(passthrough['200'].content['application/json'].schema.type).toBe('object');
  });

  it('passes a platform 422 on as the default answer documents it', async () => {
    const host = fake.addUser({ email: 'doc-host@example.com' });
    fake.failNext(422, { code: 3000, message: 'Cannot access meeting information.' });
    const res = await request(t.baseUrl, 'GET', `/api/users/${host.id}/meetings`, { token });
    expect(res.status).toBe(422);
    const validate = validator(
      '#/paths/~1api~1users~1{userId}~1meetings/get/responses/default/content/application~1json/schema',
    );
    expect(validate(res.body)).toBe(true);
    expect(res.body.upstream).toEqual({
      status: 422,
      code: 3000,
      message: 'Cannot access meeting information.',
    });
  });

  it('documents userId "me" as refused, and the service refuses it', async () => {
    const param = doc.paths['/api/users/{userId}/meetings'].get.parameters.find(
      (p: Json) => p.name === 'userId',
    );
    const pattern = new RegExp(param.schema.pattern);
    expect(['me', 'ME', '.', '..'].filter((v) => pattern.test(v))).toEqual([]);
    expect(pattern.test('host@example.com')).toBe(true);
    expect(param.description).toMatch(/refuses `me`/);
    const res = await request(t.baseUrl, 'GET', '/api/users/me/meetings', { token });
    expect(res.status).toBe(400);
  });

  it('bounds 64-bit integers at 2^53 - 1 in the document, as the service does', async () => {
    const body = doc.paths['/api/users/{userId}/meeting_templates'].post.requestBody;
    const field = body.content['application/json'].schema.properties.meeting_id;
    expect(field.maximum).toBe(Number.MAX_SAFE_INTEGER);
    const host = fake.addUser({ email: 'templates@example.com' });
    const res = await request(t.baseUrl, 'POST', `/api/users/${host.id}/meeting_templates`, {
      token,
      body: `{"meeting_id": 9007199254740993, "name": "t"}`,
    });
    expect(res.status).toBe(400);
    expect(res.body.details.map((d: Json) => d.field)).toEqual(['meeting_id']);
  });

  it('gives x-zm-signature an example that is a real signature of the first example body', () => {
    const op = doc.paths['/zoom/events'].post;
    const header = (name: string) =>
      op.parameters.find((p: Json) => p.name === name).schema.example;
    const [first] = Object.values(
      op.requestBody.content['application/json'].examples as Record<string, Json>,
    );
    const signature = header('x-zm-signature');
    expect(signature).toMatch(/^v0=[0-9a-f]{64}$/);
    expect(signature).toBe(
      signZoomRequest(
        'your_secret_token',
        header('x-zm-request-timestamp'),
        Buffer.from(JSON.stringify(first.value, null, 2)),
      ),
    );
  });

  it.each([
    ['TRACE', '/api/webhooks', 'GET, HEAD, POST', null],
    ['PUT', '/api/webhooks/00000000-0000-4000-8000-000000000000', 'DELETE, GET, HEAD, PATCH', null],
    ['DELETE', '/health/live', 'GET, HEAD', null],
    ['GET', '/oauth/token', 'POST', null],
    // Overlapping templates: only those of /users/summary, not /users/{userId}'s.
    ['OPTIONS', '/api/users/summary', 'GET, HEAD', null],
    // A body the route would not read: the method is what is wrong, not its type (was 415).
    ['TRACE', '/api/users/u1/picture', 'DELETE, POST', MULTIPART],
  ])('answers %s %s with 405 and Allow: %s', async (method, path, allow, body: Body | null) => {
    // fetch refuses TRACE; node:http sends any method.
    const res = await send(t.baseUrl, method, path, token, body ?? undefined);
    expect(res.status).toBe(405);
    expect(res.allow).toBe(allow);
    expect(res.body).toMatchObject({ statusCode: 405, error: 'Method Not Allowed' });
    expect(res.body.message).toContain(allow);
  });

  it('still answers 404 for a path nothing serves, and for an id that is not yours', async () => {
    expect((await request(t.baseUrl, 'GET', '/api/nothing-here', { token })).status).toBe(404);
    const res = await request(
      t.baseUrl,
      'GET',
      '/api/webhooks/00000000-0000-4000-8000-000000000000',
      {
        token,
      },
    );
    expect(res.status).toBe(404);
    expect(res.headers.get('allow')).toBeNull();
  });

  it('gives a new webhook one precision for created_at and updated_at: equal, never updated first', async () => {
    const [columns] = await queryDatabase<{ precisions: string }>(
      t.database.url,
      `SELECT string_agg(datetime_precision::text, ',' ORDER BY column_name) AS precisions
       FROM information_schema.columns
       WHERE table_name = 'webhooks' AND column_name IN ('created_at', 'updated_at')`,
    );
    expect(columns.precisions).toBe('3,3');
    const made = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        request(t.baseUrl, 'POST', '/api/webhooks', {
          token,
          body: {
            url: `http://127.0.0.1:9/ts-${i}`,
            events: ['job.started'],
            secret: 'whsec_0123456789abcdef',
          },
        }),
      ),
    );
    expect(made.filter((r) => r.body.updated_at !== r.body.created_at)).toEqual([]);
    const patched = await request(t.baseUrl, 'PATCH', `/api/webhooks/${made[0].body.id}`, {
      token,
      body: { active: false },
    });
    expect(Date.parse(patched.body.updated_at)).toBeGreaterThanOrEqual(
      Date.parse(patched.body.created_at),
    );
  });

  it('holds every example to its own schema: bodies, parameters and answers', () => {
    const wrong: string[] = [];
    const check = (pointer: string, example: unknown, what: string) => {
      if (example === undefined) return;
      const validate = validator(pointer);
      if (!validate(example)) wrong.push(`${what}: ${ajvText(validate)}`);
    };
    for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
      for (const [method, op] of Object.entries(item as Record<string, Json>)) {
        const at = `#/paths/${escape(path)}/${method}`;
        (op.parameters ?? []).forEach((p: Json, i: number) =>
          check(
            `${at}/parameters/${i}/schema`,
            p.schema?.example ?? p.example,
            `${method} ${path} ${p.name}`,
          ),
        );
        const json = op.requestBody?.content?.['application/json'];
        if (json?.schema) {
          check(
            `${at}/requestBody/content/application~1json/schema`,
            json.example,
            `${method} ${path} body`,
          );
          for (const [name, e] of Object.entries((json.examples ?? {}) as Record<string, Json>)) {
            check(
              `${at}/requestBody/content/application~1json/schema`,
              e.value,
              `${method} ${path} body ${name}`,
            );
          }
        }
        for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
          const content = response.content?.['application/json'];
          if (!content?.schema) continue;
          const pointer = `${at}/responses/${status}/content/application~1json/schema`;
          check(pointer, content.example, `${method} ${path} ${status}`);
          for (const [name, e] of Object.entries(
            (content.examples ?? {}) as Record<string, Json>,
          )) {
            check(pointer, e.value, `${method} ${path} ${status} ${name}`);
          }
        }
      }
    }
    // Each component's example, assembled from its properties as Swagger UI shows it.
    for (const [name, schema] of Object.entries(doc.components.schemas as Record<string, Json>)) {
      if (!schema.properties) continue;
      const example = Object.fromEntries(
        Object.entries(schema.properties as Record<string, Json>)
          .filter(([, p]) => p.example !== undefined)
          .map(([field, p]) => [field, p.example]),
      );
      const required: string[] = schema.required ?? [];
      if (required.every((field) => field in example)) {
        check(`#/components/schemas/${name}`, example, `components.schemas.${name}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe('the response check of the e2e suite (test/support/response-contract.ts)', () => {
  const doc = {
    openapi: '3.0.0',
    paths: {
      '/api/things/{id}': {
        get: {
          responses: {
            '200': {
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    properties: { state: { type: 'string', enum: ['on', 'off'] } },
                    required: ['state'],
                  },
                },
              },
            },
          },
        },
      },
    },
    components: {
      schemas: {
        ErrorResponse: {
          type: 'object',
          properties: {
            statusCode: { type: 'number' },
            error: { type: 'string' },
            message: { type: 'string' },
          },
          required: ['statusCode', 'error', 'message'],
        },
      },
    },
  };
  const answer = (
    method: string,
    url: string,
    status: number,
    body: unknown,
  ): RecordedResponse => ({
    method,
    url,
    status,
    contentType: 'application/json; charset=utf-8',
    body: Buffer.from(JSON.stringify(body)),
  });
  const contract = new ResponseContract(doc);

  it('passes a documented answer', () => {
    expect(contract.problemsOf(answer('GET', '/api/things/1?x=1', 200, { state: 'on' }))).toEqual(
      [],
    );
  });

  it('names the route, status and schema path of a body that breaks its schema', () => {
    expect(contract.problemsOf(answer('GET', '/api/things/1', 200, { state: 'dim' }))).toEqual([
      'GET /api/things/{id} 200: body/state must be equal to one of the allowed values {"allowedValues":["on","off"]} (schema #/paths/~1api~1things~1{id}/get/responses/200/content/application~1json/schema/properties/state/enum)',
    ]);
  });

  it('fails an undocumented status, and a 404 where the path has other methods', () => {
    expect(contract.problemsOf(answer('GET', '/api/things/1', 418, {}))).toEqual([
      'GET /api/things/{id} 418: status not documented (documented: 200)',
    ]);
    expect(
      contract.problemsOf(
        answer('DELETE', '/api/things/1', 404, {
          statusCode: 404,
          error: 'Not Found',
          message: 'x',
        }),
      ),
    ).toEqual([
      'DELETE /api/things/{id} 404: method not documented (get are), expected 405 with Allow',
    ]);
  });

  it('holds answers to unknown paths to a 4xx in the error shape', () => {
    expect(
      contract.problemsOf(
        answer('GET', '/nope', 404, { statusCode: 404, error: 'Not Found', message: 'x' }),
      ),
    ).toEqual([]);
    expect(contract.problemsOf(answer('GET', '/nope', 404, { oops: true }))).toHaveLength(3);
  });
});

function send(
  baseUrl: string,
  method: string,
  path: string,
  token: string,
  body?: Body,
): Promise<{ status: number; allow: string | undefined; body: Json }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    // node:http frames no body of a TRACE or OPTIONS by itself: the length says there is one.
    if (body) {
      headers['content-type'] = body.type;
      headers['content-length'] = String(Buffer.byteLength(body.bytes));
    }
    const req = httpRequest(`${baseUrl}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          allow: res.headers.allow,
          body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
        }),
      );
    });
    req.on('error', reject);
    req.end(body?.bytes);
  });
}

function ajvText(validate: ValidateFunction): string {
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
}
