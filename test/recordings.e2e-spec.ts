import { createHash } from 'node:crypto';
import {
  FakeMeeting,
  FakeRecordingFile,
  FileTransfer,
  FakeUser,
  FakeZoom,
  recordingChunks,
} from './support/fake-zoom';
import { RequestOptions, jsonOf, request } from './support/http';
import { readStreamed } from './support/streamed-read';
import { TestApp, scopesOfBut, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';

const MB = 1024 * 1024;

const file = (
  id: string | undefined,
  file_type: string,
  file_size: number,
  content_type = 'application/octet-stream',
): FakeRecordingFile => ({
  id,
  file_type,
  file_extension: file_type === 'TRANSCRIPT' || file_type === 'CC' ? 'VTT' : file_type,
  file_size,
  recording_type: file_type.toLowerCase(),
  content_type,
});

const typesOf = (files: { file_type: string }[]) => files.map((f) => f.file_type).sort();

/** GET of this service's download route for one file of a meeting's recording. */
const downloadOf = (t: TestApp, token: string, m: FakeMeeting, fileId: string) =>
  fetch(`${t.baseUrl}/api/meetings/${encodeURIComponent(m.uuid)}/recordings/${fileId}/download`, {
    headers: { authorization: `Bearer ${token}` },
  });

describe('recording passthrough (docs/api.md#platform-passthrough)', () => {
  let fake: FakeZoom;
  let t: TestApp;
  let token: string;
  let host: FakeUser;
  let meeting: FakeMeeting;
  let big: FakeMeeting;
  const mp4 = file('a1b2c3d4-0001', 'MP4', 3 * MB + 123, 'video/mp4');
  const m4a = file('a1b2c3d4-0002', 'M4A', 95663, 'audio/mp4');
  const bigMp4 = file('big-0001', 'MP4', 50 * MB, 'video/mp4');

  const api = (method: string, path: string, options: RequestOptions = {}) =>
    request(t.baseUrl, method, path, { token, ...options });

  beforeAll(async () => {
    fake = await FakeZoom.start();
    t = await startTestApp({ env: fake.env() });
    token = await t.token();
    host = fake.addUser();
    meeting = fake.addMeeting(host.id, { uuid: '/Rec0rdingUuidAAAAAAAA==' });
    fake.addRecording(meeting, [
      mp4,
      m4a,
      file('a1b2c3d4-0003', 'TRANSCRIPT', 2048, 'text/vtt'),
      file('a1b2c3d4-0004', 'CHAT', 512, 'text/plain'),
      file(undefined, 'CC', 1024),
      file(undefined, 'TIMELINE', 300),
    ]);
    big = fake.addMeeting(host.id);
    fake.addRecording(big, [bigMp4, file('big-0002', 'M4A', 1000, 'audio/mp4')]);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  describe('lists', () => {
    it("returns a meeting's recording with every file", async () => {
      const res = await api('GET', `/api/meetings/${encodeURIComponent(meeting.uuid)}/recordings`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ uuid: meeting.uuid, id: meeting.id, recording_count: 6 });
      expect(typesOf(res.body.recording_files)).toEqual([
        'CC',
        'CHAT',
        'M4A',
        'MP4',
        'TIMELINE',
        'TRANSCRIPT',
      ]);
      expect(fake.apiRequests().at(-1)?.apiPath).toBe(
        '/meetings/%252FRec0rdingUuidAAAAAAAA%253D%253D/recordings',
      );
    });

    it.each([
      ['file_type=MP4,transcript', ['MP4', 'TRANSCRIPT']],
      ['file_type=M4A&file_type=chat', ['CHAT', 'M4A']],
      ['file_type=TIMELINE', ['TIMELINE']],
      ['file_type=SUMMARY', []],
    ])("filters a meeting's files by %s", async (query, expected) => {
      const res = await api('GET', `/api/meetings/${meeting.id}/recordings?${query}`);
      expect(res.status).toBe(200);
      expect(typesOf(res.body.recording_files)).toEqual(expected);
      // The filter is this service's: the platform is asked for the whole recording.
      expect(fake.apiRequests().at(-1)?.rawUrl).toBe(
        `/regional/v2/meetings/${meeting.id}/recordings`,
      );
    });

    it("lists a user's recordings, passing from/to on and filtering by file_type here", async () => {
      const all = await api(
        'GET',
        `/api/users/${host.id}/recordings?from=2025-01-01&to=2025-01-31`,
      );
      expect(all.status).toBe(200);
      expect(all.body.meetings).toHaveLength(2);
      expect(Object.fromEntries(fake.apiRequests().at(-1)?.query ?? [])).toEqual({
        from: '2025-01-01',
        to: '2025-01-31',
      });

      const transcripts = await api(
        'GET',
        `/api/users/${host.id}/recordings?from=2025-01-01&to=2025-01-31&file_type=TRANSCRIPT&page_size=10`,
      );
      expect(transcripts.status).toBe(200);
      // Only the meeting with a transcript is left, with only its transcript.
      expect(transcripts.body.meetings).toHaveLength(1);
      expect(transcripts.body.meetings[0].uuid).toBe(meeting.uuid);
      expect(typesOf(transcripts.body.meetings[0].recording_files)).toEqual(['TRANSCRIPT']);
      expect(Object.fromEntries(fake.apiRequests().at(-1)?.query ?? [])).toEqual({
        from: '2025-01-01',
        to: '2025-01-31',
        page_size: '10',
      });
    });

    it('passes a platform 404 for a meeting without recording', async () => {
      const bare = fake.addMeeting(host.id);
      const res = await api('GET', `/api/meetings/${bare.id}/recordings`);
      expect(res.status).toBe(404);
      expect(res.body.upstream).toEqual({
        status: 404,
        code: 3301,
        message: 'This recording does not exist.',
      });
    });
  });

  describe('download', () => {
    const download = (m: FakeMeeting, fileId: string) => downloadOf(t, token, m, fileId);

    it('streams the file with its content-type, content-length and content-disposition', async () => {
      const res = await download(meeting, mp4.id as string);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('video/mp4');
      expect(res.headers.get('content-length')).toBe(String(mp4.file_size));
      expect(res.headers.get('content-disposition')).toBe(
        'attachment; filename="a1b2c3d4-0001.mp4"',
      );
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes.length).toBe(mp4.file_size);
      expect(createHash('sha256').update(bytes).digest('hex')).toBe(fake.fileSha256(mp4));
    });

    it('sends the token to the platform, and follows its redirect to storage without it', () => {
      const platformCall = fake.requests
        .filter((r) => r.rawPath === `/rec/download/${mp4.id}`)
        .at(-1);
      expect(platformCall?.headers.authorization).toMatch(/^Bearer \S+$/);
      const storageCall = fake.storageRequests.at(-1);
      expect(storageCall?.rawPath).toBe(`/file/${mp4.id}`);
      expect(storageCall?.headers.authorization).toBeUndefined();
    });

    it('streams directly when the platform serves the file itself', async () => {
      fake.redirectDownloads = false;
      const storageBefore = fake.storageRequests.length;
      try {
        const res = await download(meeting, m4a.id as string);
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('audio/mp4');
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(fake.fileSha256(m4a));
        expect(fake.storageRequests.length).toBe(storageBefore);
      } finally {
        fake.redirectDownloads = true;
      }
    });

    it('renews the token when the download itself meets a 401', async () => {
      const before = fake.tokenRequests;
      fake.revokeTokens();
      const res = await download(meeting, m4a.id as string);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(m4a.file_size);
      expect(fake.tokenRequests).toBe(before + 1);
    });

    it('answers 404 for a file id that is not in the recording, without downloading', async () => {
      const downloadsBefore = fake.requests.filter((r) => r.rawPath.startsWith('/rec/')).length;
      const res = await download(meeting, 'not-a-file');
      expect(res.status).toBe(404);
      expect(await jsonOf(res)).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: `Recording file not-a-file is not part of the recording of meeting ${meeting.uuid}`,
      });
      expect(fake.requests.filter((r) => r.rawPath.startsWith('/rec/')).length).toBe(
        downloadsBefore,
      );
    });

    describe('ranges', () => {
      /** The bytes first..last of a file as the fake serves it. */
      const slice = (f: FakeRecordingFile, first: number, last: number) =>
        Buffer.concat([...recordingChunks(f.id ?? '', f.file_size)]).subarray(first, last + 1);

      it.each([
        ['through the storage redirect', true],
        ['served by the platform itself', false],
      ])(
        'passes Range on and answers 206 with exactly the asked bytes (%s)',
        async (_how, redirect) => {
          fake.redirectDownloads = redirect;
          try {
            for (const [range, first, last] of [
              ['bytes=1000-1999', 1000, 1999],
              ['bytes=3145000-', 3145000, mp4.file_size - 1],
              ['bytes=-500', mp4.file_size - 500, mp4.file_size - 1],
            ] as const) {
              const res = await fetch(
                `${t.baseUrl}/api/meetings/${meeting.id}/recordings/${mp4.id}/download`,
                { headers: { authorization: `Bearer ${token}`, range } },
              );
              expect(res.status).toBe(206);
              expect(res.headers.get('content-range')).toBe(
                `bytes ${first}-${last}/${mp4.file_size}`,
              );
              expect(res.headers.get('content-length')).toBe(String(last - first + 1));
              const bytes = Buffer.from(await res.arrayBuffer());
              expect(bytes.equals(slice(mp4, first, last))).toBe(true);
            }
          } finally {
            fake.redirectDownloads = true;
          }
        },
      );

      it('passes a 416 for a range past the end of the file on', async () => {
        const res = await fetch(
          `${t.baseUrl}/api/meetings/${meeting.id}/recordings/${m4a.id}/download`,
          { headers: { authorization: `Bearer ${token}`, range: `bytes=${m4a.file_size + 10}-` } },
        );
        expect(res.status).toBe(416);
        expect((await jsonOf(res)).upstream.status).toBe(416);
      });
    });

    it.each(['localhost', '127.0.0.2'])(
      'refuses a download redirect to %s (a loopback address off the platform hosts) before asking it',
      async (host) => {
        fake.storageHost = host;
        const storageBefore = fake.storageRequests.length;
        try {
          const res = await download(meeting, mp4.id as string);
          expect(res.status).toBe(502);
          expect(await jsonOf(res)).toEqual({
            statusCode: 502,
            error: 'Bad Gateway',
            message: `The recording download redirected off the meeting platform (${host})`,
          });
          expect(fake.storageRequests.length).toBe(storageBefore);
        } finally {
          fake.storageHost = '127.0.0.1';
        }
      },
    );

    it('passes the tracking id and rate-limit headers on with the recording lists', async () => {
      const res = await api('GET', `/api/meetings/${meeting.id}/recordings?file_type=MP4`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-zm-trackingid')).toBe(fake.lastTrackingId);
      expect(res.headers.get('x-ratelimit-remaining')).toBe('29');
    });

    it('answers 502 and sends no token when a download_url points off the platform', async () => {
      const odd = fake.addMeeting(host.id);
      fake.addRecording(odd, [
        { ...file('evil-0001', 'MP4', 10), download_url: `${fake.storageUrl}/file/evil-0001` },
      ]);
      const storageBefore = fake.storageRequests.length;
      const res = await download(odd, 'evil-0001');
      expect(res.status).toBe(502);
      expect((await jsonOf(res)).message).toBe(
        'The recording download_url is not on the meeting platform',
      );
      expect(fake.storageRequests.length).toBe(storageBefore);
    });

    it('streams a 50 MB file with flat memory, bytes intact', async () => {
      // Warm the same path first (connections, parsers, code), so the baseline is steady state.
      const warm = await download(big, 'big-0002');
      expect((await warm.arrayBuffer()).byteLength).toBe(1000);
      const read = await readStreamed(() => download(big, bigMp4.id as string), 2 * MB);
      expect(read.res.status).toBe(200);
      expect(read.res.headers.get('content-length')).toBe(String(50 * MB));

      expect(read.bytes).toBe(50 * MB);
      expect(read.sha256).toBe(fake.fileSha256(bigMp4));
      // The fake platform, the bridge and this client share one process: whatever the three
      // hold live at once stays a small fraction of the file (measured: under 10 MB; a version
      // that buffers the file measured +103 MB). RSS also moves by up to ~35 MB with the
      // collector's and allocator's own housekeeping in this large process, so its bound is
      // only that it never grows by the file's size (the buffering version: +94 MB).
      expect(read.peakLiveBytes).toBeLessThan(20 * MB);
      expect(read.peakRssBytes).toBeLessThan(50 * MB);
    }, 180_000); // 50 MB through the bridge, on a loaded machine

    it('answers HEAD with the headers only, without pulling the file', async () => {
      const before = fake.transfers.length;
      const res = await fetch(
        `${t.baseUrl}/api/meetings/${big.id}/recordings/${bigMp4.id}/download`,
        { method: 'HEAD', headers: { authorization: `Bearer ${token}` } },
      );
      expect(res.status).toBe(200);
      expect(res.headers.get('content-length')).toBe(String(50 * MB));
      const transfer = await waitFor(
        () => fake.transfers.slice(before).find((x) => x.state !== 'streaming'),
        { what: 'the platform transfer to end' },
      );
      expect(transfer.state).toBe('aborted');
    });

    it('stops pulling from the platform when the client goes away', async () => {
      const first = fake.transfers.find((x) => x.fileId === bigMp4.id);
      const controller = new AbortController();
      const res = await fetch(
        `${t.baseUrl}/api/meetings/${big.id}/recordings/${bigMp4.id}/download`,
        { headers: { authorization: `Bearer ${token}` }, signal: controller.signal },
      );
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      await reader.read();
      controller.abort();
      const transfer = await waitFor<FileTransfer>(
        () =>
          fake.transfers.find(
            (x) => x.fileId === bigMp4.id && x.state !== 'streaming' && x !== first,
          ),
        { what: 'the platform transfer to end' },
      );
      expect(transfer.state).toBe('aborted');
      expect(transfer.bytes).toBeLessThan(25 * MB);
    });
  });

  describe('delete', () => {
    it("deletes a meeting's recordings, passing action on", async () => {
      const doomed = fake.addMeeting(host.id);
      fake.addRecording(doomed, [file('doomed-1', 'MP4', 10)]);
      const res = await api('DELETE', `/api/meetings/${doomed.id}/recordings?action=delete`);
      expect(res.status).toBe(204);
      expect(fake.deletedRecordings.at(-1)).toEqual({ uuid: doomed.uuid, action: 'delete' });
      expect((await api('GET', `/api/meetings/${doomed.id}/recordings`)).status).toBe(404);
    });

    it('refuses an unknown action before calling the platform', async () => {
      const before = fake.requests.length;
      const res = await api('DELETE', `/api/meetings/${meeting.id}/recordings?action=shred`);
      expect(res.status).toBe(400);
      expect(res.body.details[0].field).toBe('action');
      expect(fake.requests.length).toBe(before);
    });
  });

  describe('scopes', () => {
    it.each([
      ['GET', '/api/users/u1/recordings', 'recordings:read'],
      ['GET', '/api/meetings/123/recordings', 'recordings:read'],
      ['GET', '/api/meetings/123/recordings/f1/download', 'recordings:read'],
      ['DELETE', '/api/meetings/123/recordings', 'recordings:write'],
    ] as const)('%s %s needs %s', async (method, path, scope) => {
      const before = fake.requests.length;
      const narrow = await t.token('alpha', scopesOfBut('alpha', scope));
      const res = await request(t.baseUrl, method, path, { token: narrow });
      expect(res.status).toBe(403);
      expect(res.body.message).toBe(`The token lacks scope ${scope}`);
      expect(fake.requests.length).toBe(before);
    });
  });
});

describe('recording download when the platform stalls', () => {
  // A stall here lasts until the test releases it: an answer can only come from the timeout,
  // so the tests need no clock of their own.
  const TIMEOUT_MS = 1500;
  let fake: FakeZoom;
  let t: TestApp;
  let token: string;
  let meeting: FakeMeeting;
  const mp4 = file('stall-0001', 'MP4', 4 * MB, 'video/mp4');
  const download = () => downloadOf(t, token, meeting, mp4.id as string);

  beforeAll(async () => {
    fake = await FakeZoom.start();
    t = await startTestApp({ env: { ...fake.env(), ZOOM_TIMEOUT_MS: String(TIMEOUT_MS) } });
    token = await t.token();
    meeting = fake.addMeeting(fake.addUser().id);
    fake.addRecording(meeting, [mp4]);
  });
  afterAll(async () => {
    await t?.close();
    await fake?.close();
  });

  it('answers 504 when the platform sends no headers within ZOOM_TIMEOUT_MS', async () => {
    fake.stallNext(1, (r) => r.rawPath === `/rec/download/${mp4.id}`);
    try {
      const res = await download();
      expect(res.status).toBe(504);
      expect(await jsonOf(res)).toEqual({
        statusCode: 504,
        error: 'Gateway Timeout',
        message: `The meeting platform did not answer within ${TIMEOUT_MS} ms`,
      });
    } finally {
      fake.release();
    }
  });

  it('cuts the response short when the body stalls after streaming began, then recovers', async () => {
    const before = fake.transfers.length;
    fake.stallFileNext(mp4.id as string, 256 * 1024);
    const res = await download();
    // The status line went out with the first bytes: a truncated body is all that can say so.
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe(String(mp4.file_size));
    await expect(res.arrayBuffer()).rejects.toThrow();
    // The bridge let go of the platform's connection too, rather than waiting on it.
    const transfer = await waitFor(
      () => fake.transfers.slice(before).find((x) => x.state !== 'streaming'),
      { what: 'the stalled platform transfer to end' },
    );
    expect(transfer).toMatchObject({ fileId: mp4.id, state: 'aborted', bytes: 256 * 1024 });
    expect(t.logs.join('\n')).toMatch(/download of file stall-0001 .* ended early/);

    const again = await download();
    expect(again.status).toBe(200);
    const bytes = Buffer.from(await again.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(fake.fileSha256(mp4));
  });
});
