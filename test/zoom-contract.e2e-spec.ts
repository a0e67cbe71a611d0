import { ZOOM_OPERATIONS, ZoomOperation } from '../src/zoom/zoom-operations';
import published from './fixtures/zoom-openapi-paths.json';
import { FakeZoom } from './support/fake-zoom';
import { request } from './support/http';
import { TestApp, startTestApp } from './support/test-app';

/**
 * The platform client may only call what the platform publishes. The fixture holds the paths,
 * methods and query parameter names of the platform's OpenAPI document
 * (ZoomMeetingAPISpec.json) for the paths the client uses; regenerate it with
 * test/fixtures/extract-zoom-paths.ts.
 */
type Published = Record<string, Record<string, { operationId: string | null; query: string[] }>>;
const paths = published.paths as Published;

const operations = Object.entries(ZOOM_OPERATIONS) as [string, ZoomOperation][];

describe('platform client contract with the published OpenAPI document', () => {
  it('was extracted from the platform document', () => {
    expect(published.title).toBe('Zoom Meeting API');
    expect(published.source).toBe('ZoomMeetingAPISpec.json');
  });

  it.each(operations)('%s: its method and path exist in the document', (_name, op) => {
    expect(Object.keys(paths[op.path] ?? {})).toContain(op.method);
  });

  it.each(operations)('%s: every query parameter it may send is documented', (_name, op) => {
    const documented = paths[op.path]?.[op.method]?.query ?? [];
    for (const name of op.query)
      expect({ name, documented: documented.includes(name) }).toEqual({
        name,
        documented: true,
      });
  });

  describe('what the client really sends', () => {
    let fake: FakeZoom;
    let t: TestApp;

    beforeAll(async () => {
      fake = await FakeZoom.start();
      t = await startTestApp({ env: fake.env() });
    });
    afterAll(async () => {
      await t?.close();
      await fake?.close();
    });

    /** The operation whose template matches a request as the platform received it. */
    const operationOf = (method: string, rawPath: string) =>
      operations.find(
        ([, op]) =>
          op.method === method &&
          new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}$`).test(rawPath),
      );

    it('uses only tabled operations, with only their listed query parameters', async () => {
      const token = await t.token();
      const host = fake.addUser();
      const meeting = fake.addMeeting(host.id, { uuid: '/Contract//Uuid==' });
      fake.addRecording(meeting, [
        {
          id: 'c-1',
          file_type: 'M4A',
          file_extension: 'M4A',
          file_size: 10,
          recording_type: 'audio_only',
          content_type: 'audio/mp4',
        },
      ]);
      const m = encodeURIComponent(meeting.uuid);
      const calls: [string, string, unknown?][] = [
        ['GET', '/api/users?status=active&page_size=10&next_page_token=abc'],
        ['POST', `/api/users/${host.id}/meetings`, { topic: 'Contract', type: 2 }],
        ['GET', `/api/users/${host.id}/meetings?type=scheduled&page_size=5&next_page_token=x`],
        ['GET', `/api/meetings/${m}`],
        ['PATCH', `/api/meetings/${m}`, { topic: 'Renamed' }],
        ['PUT', `/api/meetings/${m}/status`, { action: 'end' }],
        ['GET', `/api/users/${host.id}/recordings?from=2025-01-01&to=2025-01-31&page_size=3`],
        ['GET', `/api/meetings/${m}/recordings?file_type=M4A`],
        ['GET', `/api/meetings/${m}/recordings/c-1/download`],
        ['DELETE', `/api/meetings/${m}/recordings?action=trash`],
        ['DELETE', `/api/meetings/${m}`],
      ];
      for (const [method, path, body] of calls) {
        const res = await request(t.baseUrl, method, path, { token, body });
        expect({ method, path, ok: [200, 201, 204].includes(res.status) }).toEqual({
          method,
          path,
          ok: true,
        });
      }

      const used = new Set<string>();
      for (const call of fake.apiRequests()) {
        const match = operationOf(call.method, call.apiPath as string);
        expect({ call: `${call.method} ${call.apiPath}`, tabled: Boolean(match) }).toEqual({
          call: `${call.method} ${call.apiPath}`,
          tabled: true,
        });
        const [name, op] = match as [string, ZoomOperation];
        used.add(name);
        for (const key of call.query.keys()) expect(op.query).toContain(key);
      }
      // Every operation of the table was exercised above.
      expect([...used].sort()).toEqual(operations.map(([name]) => name).sort());
    });
  });
});
