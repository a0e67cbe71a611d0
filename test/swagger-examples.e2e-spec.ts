import { STATUS_CODES } from 'node:http';
import { Json, request } from './support/http';
import { TestApp, startTestApp } from './support/test-app';

interface DocumentedError {
  route: string;
  status: string;
  /** The media types the answer is documented as. */
  types: string[];
  schema: Json;
  /** Every example Swagger UI can show for it: the single one or each named one. */
  examples: { name: string; value: Json }[];
}

const ERROR_FIELDS = ['statusCode', 'error', 'message', 'details', 'upstream', 'error_description'];

/** What is wrong with one error example, as readable lines (none when it is right). */
function problemsOf(status: number, example: Json): string[] {
  // Without one, Swagger UI makes one up from the schema: the 400 validation example.
  if (typeof example !== 'object' || example === null) return ['no example of its own'];
  const problems: string[] = [];
  if (example.statusCode !== status) problems.push(`statusCode is ${example.statusCode}`);
  const unknown = Object.keys(example).filter((key) => !ERROR_FIELDS.includes(key));
  if (unknown.length > 0) problems.push(`fields outside the error shape: ${unknown.join(', ')}`);
  if (typeof example.message !== 'string' || example.message === '') problems.push('no message');
  // The token endpoint answers RFC 6749 errors: its code in `error`, the message repeated.
  if (example.error_description !== undefined) {
    if (!/^[a-z_]+$/.test(example.error)) problems.push(`error ${example.error} is no OAuth code`);
    if (example.error_description !== example.message) problems.push('error_description differs');
  } else if (example.error !== STATUS_CODES[status]) {
    problems.push(`error is ${example.error}, not ${STATUS_CODES[status]}`);
  }
  if (example.details !== undefined) {
    const ok =
      Array.isArray(example.details) &&
      example.details.length > 0 &&
      example.details.every(
        (d: Json) =>
          Object.keys(d).sort().join() === 'field,message' &&
          typeof d.field === 'string' &&
          typeof d.message === 'string',
      );
    if (!ok) problems.push('details are not [{field, message}]');
  }
  if (example.upstream !== undefined) {
    const u = example.upstream;
    if (typeof u?.status !== 'number' || !('code' in u) || !('message' in u)) {
      problems.push('upstream is not {status, code, message}');
    }
  }
  return problems;
}

describe('Swagger examples (/docs-json), against the real app', () => {
  let t: TestApp;
  let doc: Json;
  let errors: DocumentedError[];

  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false' } });
    doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    errors = Object.entries(doc.paths as Record<string, Record<string, Json>>).flatMap(
      ([path, operations]) =>
        Object.entries(operations).flatMap(([method, operation]) =>
          Object.entries(operation.responses as Record<string, Json>)
            // The install callback answers the installing person's browser with a page, never
            // JSON (docs/accounts.md): its 400 is HTML by design.
            .filter(([status]) => /^[45]/.test(status) && path !== '/zoom/oauth/callback')
            .map(([status, response]) => {
              const json = response.content?.['application/json'] ?? {};
              return {
                route: `${method.toUpperCase()} ${path}`,
                status,
                types: Object.keys(response.content ?? {}),
                schema: json.schema,
                examples: json.examples
                  ? Object.entries(json.examples as Record<string, Json>).map(([name, e]) => ({
                      name,
                      value: e.value,
                    }))
                  : [{ name: 'example', value: json.example }],
              };
            }),
        ),
    );
  });
  afterAll(() => t.close());

  it('documents every 4xx and 5xx answer as JSON in the error shape, each example with its own statusCode', () => {
    const wrong = errors.flatMap(({ route, status, types, schema, examples }) => {
      const problems = examples.flatMap(({ name, value }) =>
        problemsOf(Number(status), value).map((p) => `${name}: ${p}`),
      );
      if (types.join() !== 'application/json') problems.push(`media types ${types.join(', ')}`);
      if (schema?.$ref !== '#/components/schemas/ErrorResponse') problems.push('schema');
      return problems.map((problem) => `${route} ${status}: ${problem}`);
    });
    expect(wrong).toEqual([]);
  });

  it('walks the answers that once all showed the validation example, and more', () => {
    const documented = new Set(errors.map(({ route, status }) => `${route} ${status}`));
    for (const answer of [
      'POST /oauth/token 400',
      'POST /oauth/token 401',
      'POST /zoom/events 400',
      'POST /zoom/events 401',
      'POST /zoom/events 413',
      'POST /zoom/events 503',
      'GET /health/ready 503',
      'GET /api/meetings/{meetingId}/recordings/{fileId}/download 404',
      'POST /api/webhooks 415',
    ]) {
      expect({ answer, documented: documented.has(answer) }).toEqual({ answer, documented: true });
    }
    expect(errors.length).toBeGreaterThan(100);
  });

  it('gives the token endpoint a named example for each OAuth error it answers', () => {
    const [badRequest] = errors.filter(
      (e) => e.route === 'POST /oauth/token' && e.status === '400',
    );
    expect(badRequest.examples.map((e) => e.value.error).sort()).toEqual([
      'invalid_request',
      'invalid_scope',
      'unsupported_grant_type',
    ]);
  });

  it('creates a webhook from the create example exactly as Swagger UI pre-fills it, with no DNS and private URLs refused', async () => {
    const schema = doc.components.schemas.CreateWebhookDto;
    const example = Object.fromEntries(
      Object.entries(schema.properties as Record<string, Json>).map(([name, p]) => [
        name,
        p.example,
      ]),
    );
    // An address literal: nothing to resolve, so the machine's DNS does not matter.
    expect(new URL(example.url).hostname).toMatch(/^[\d.]+$|^\[[\da-f:]+\]$/);
    const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
      token: await t.token('alpha'),
      body: example,
    });
    expect({ status: res.status, body: res.body }).toEqual({
      status: 201,
      body: expect.objectContaining({ url: example.url, events: example.events, active: true }),
    });
    // The documented answer shows that same URL.
    expect(doc.components.schemas.WebhookResponse.properties.url.example).toBe(example.url);
  });
});
