import {
  PLATFORM_DOCUMENT,
  PLATFORM_OPERATIONS,
  PlatformOperation,
  expressPath,
  platformOperation,
} from '../src/platform-api/platform-operations';
import { FakeZoom } from './support/fake-zoom';
import { request } from './support/http';
import { MEETING_ID, USER_ID, exampleRequest } from './support/platform-examples';
import { PlatformContract } from './support/platform-contract';
import { ResponseContract } from './support/response-contract';
import { apiRoutes } from './support/routes';
import { TestApp, startTestApp } from './support/test-app';

/**
 * docs/api.md#platform-passthrough coverage: every operation of the Meetings, Webinars, Users, Cloud Recording and
 * Reports groups of the platform's published document is served at /api + its path. Each one
 * gets a valid request built from the document's own schemas (every documented query parameter
 * and body field filled in), sent through the service to a fake platform that checks what it
 * receives against the same document; all must pass. The route table was generated from
 * ZoomMeetingAPISpec.json by scripts/extract-platform-operations.ts.
 */
const GROUPS = ['Meetings', 'Webinars', 'Users', 'Cloud Recording', 'Reports'];

describe('platform passthrough contract with the published OpenAPI document', () => {
  let fake: FakeZoom;
  let t: TestApp;
  let token: string;
  let contract: ResponseContract;

  beforeAll(async () => {
    fake = await FakeZoom.start({ contract: true });
    t = await startTestApp({ env: fake.env() });
    token = await t.token();
    contract = new ResponseContract((await request(t.baseUrl, 'GET', '/docs-json')).body);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('holds the 156 operations of the five groups of the platform document', () => {
    expect(PLATFORM_DOCUMENT).toMatchObject({
      source: 'ZoomMeetingAPISpec.json',
      title: 'Zoom Meeting API',
    });
    expect(PLATFORM_OPERATIONS).toHaveLength(156);
    expect([...new Set(PLATFORM_OPERATIONS.map((op) => op.group))].sort()).toEqual(
      [...GROUPS].sort(),
    );
  });

  it("documents each operation's success answers as the platform's document does", async () => {
    const doc = (await request(t.baseUrl, 'GET', '/docs-json')).body;
    const differences = PLATFORM_OPERATIONS.flatMap((op) => {
      const responses = doc.paths[`/api${op.path}`][op.method.toLowerCase()].responses;
      const documented = Object.keys(responses).filter((status) => /^2\d\d$/.test(status));
      const expected = Object.keys(op.responses);
      if (documented.join() !== expected.join()) {
        return [`${op.method} ${op.path}: ${documented.join()} instead of ${expected.join()}`];
      }
      return expected.flatMap((status) => {
        const types = Object.keys(responses[status].content ?? {});
        const platform = op.responses[status].contentType;
        return types.join() === (platform ?? '')
          ? []
          : [`${op.method} ${op.path} ${status}: content ${types.join()} instead of ${platform}`];
      });
    });
    expect(differences).toEqual([]);
    // A body schema, not "a JSON object": GET /meetings/{meetingId} lists the meeting's fields.
    const meeting = doc.paths['/api/meetings/{meetingId}'].get.responses['200'];
    expect(Object.keys(meeting.content['application/json'].schema.properties)).toEqual(
      expect.arrayContaining(['id', 'topic', 'start_time', 'settings']),
    );
  });

  it('serves each operation at /api + its platform path with the same method', () => {
    const served = new Set(apiRoutes(t.app).map(([method, path]) => `${method} ${path}`));
    const missing = PLATFORM_OPERATIONS.map((op) => `${op.method} /api${expressPath(op)}`).filter(
      (route) => !served.has(route),
    );
    expect(missing).toEqual([]);
  });

  const byRoute = PLATFORM_OPERATIONS.map((op) => [op.method, op.path, op] as const);

  it.each(byRoute)(
    '%s %s: a valid request reaches the operation unchanged and the platform accepts it',
    async (method, _path, op: PlatformOperation) => {
      const example = exampleRequest(op);
      const qs = example.query.toString();
      const before = fake.contractChecks.length;
      const res = await request(t.baseUrl, method, `/api${example.path}${qs ? `?${qs}` : ''}`, {
        token,
        body: example.body,
        headers: example.contentType ? { 'content-type': example.contentType } : {},
      });
      const checks = fake.contractChecks.slice(before);
      expect(checks).toEqual([{ operation: op.id, violations: [] }]);
      // The platform's answer, passed on as it came: status, and the body its document shapes
      // (test/support/response-contract.ts holds it against /docs-json after this file).
      const answer = PlatformContract.successAnswer(op);
      expect({ status: res.status, body: res.body }).toEqual(answer);
      const contentType = res.headers.get('content-type') ?? '';
      expect(contentType || 'none').toMatch(
        answer.body === undefined ? /^none$/ : /^application\/json\b/,
      );
      // …and it is what /docs-json documents for that status: the platform's schema.
      const recorded = { method, url: `/api${example.path}`, status: res.status, contentType };
      expect(contract.problemsOf({ ...recorded, body: Buffer.from(res.text) })).toEqual([]);
      // Every documented query parameter and body field arrived as sent.
      const received = fake.apiRequests().at(-1);
      expect(Object.fromEntries(received?.query ?? [])).toEqual(Object.fromEntries(example.query));
      if (example.contentType === 'application/json') {
        expect(JSON.parse(received?.body ?? '')).toEqual(JSON.parse(example.body as string));
      } else if (example.body !== undefined) {
        expect(received?.body).toBe(example.body);
      }
    },
  );

  describe('one invalid field per group is refused with 400, before any platform call', () => {
    const cases: [string, string, string, string, unknown, string][] = [
      [
        'Meetings',
        'meetingCreate',
        `/api/users/${USER_ID}/meetings`,
        'POST',
        { topic: 'x', settings: { host_video: 'yes' } },
        'settings.host_video',
      ],
      [
        'Webinars',
        'webinarRegistrantCreate',
        `/api/webinars/${MEETING_ID}/registrants`,
        'POST',
        { first_name: 'Jill' },
        'email',
      ],
      ['Users', 'users', '/api/users?page_size=301', 'GET', undefined, 'page_size'],
      [
        'Cloud Recording',
        'recordingDelete',
        `/api/meetings/${MEETING_ID}/recordings?action=shred`,
        'DELETE',
        undefined,
        'action',
      ],
      ['Reports', 'reportDaily', '/api/report/daily?month=june', 'GET', undefined, 'month'],
    ];

    it.each(cases)('%s (%s): %s %s', async (group, id, path, method, body, field) => {
      expect(platformOperation(id).group).toBe(group);
      const before = fake.requests.length;
      const res = await request(t.baseUrl, method, path, { token, body });
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ statusCode: 400, error: 'Bad Request' });
      expect(res.body.details.map((d: { field: string }) => d.field)).toEqual([field]);
      expect(fake.requests.length).toBe(before);
    });
  });
});
