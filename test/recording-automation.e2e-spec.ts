import { createHash } from 'node:crypto';
import { ZoomEvent, recordingCompleted } from '../scripts/platform/zoom-events';
import { FakeMeeting, FakeZoom } from './support/fake-zoom';
import { Json, request } from './support/http';
import { Receiver, startReceiver } from './support/receiver';
import { queryDatabase } from './support/test-db';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { expectedMeeting } from './support/zoom-fixtures';
import { sendZoomEvent } from './support/zoom-sender';

const PUBLIC_BASE_URL = 'https://bridge.example.com';
const RETRIES = 2;

const file = (id: string | undefined, fileType: string, size: number) => ({
  id,
  file_type: fileType,
  file_extension: fileType === 'TRANSCRIPT' ? 'VTT' : fileType,
  file_size: size,
  recording_type: 'shared_screen_with_speaker_view',
  content_type: 'application/octet-stream',
});

/** The platform's event for a fake meeting's recording, naming the given file ids. */
function eventFor(meeting: FakeMeeting, event: string, fileIds: string[]): ZoomEvent {
  const base = recordingCompleted(meeting.uuid, 'dl-token-never-forwarded');
  const object = base.payload.object as Record<string, unknown>;
  object.id = meeting.id;
  object.recording_files = fileIds.map((id) => ({
    id,
    file_type: 'X',
    download_url: 'https://example.zoom.us/rec/download/stale',
  }));
  return { ...base, event };
}

describe('recording automation with platform credentials (files from the API)', () => {
  let zoom: FakeZoom;
  let receiver: Receiver;
  let t: TestApp;
  let paths: { complete: string; failed: string };
  const bodies = (path: string, uuid: string): Json[] =>
    receiver
      .requests(path)
      .map((r) => JSON.parse(r.body.toString('utf8')))
      .filter((b) => b.data.uuid === uuid);

  beforeAll(async () => {
    zoom = await FakeZoom.start();
    receiver = await startReceiver();
    t = await startTestApp({
      env: {
        ...zoom.env(),
        PUBLIC_BASE_URL,
        RECORDING_FILE_TYPES: 'MP4,TRANSCRIPT,TIMELINE',
        RECORDING_AUTOMATION_MAX_RETRIES: String(RETRIES),
        RECORDING_AUTOMATION_BACKOFF_MS: '20',
        INBOUND_SWEEP_INTERVAL_MS: '200',
        INBOUND_SWEEP_GRACE_MS: '1000',
      },
    });
    const token = await t.token();
    const subscribe = async (kind: string) => {
      const { url, path } = receiver.route({}, kind.replace('.', '-'));
      const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: { url, events: [kind], secret: 'subscriber-secret-0123456789' },
      });
      expect(res.status).toBe(201);
      return path;
    };
    paths = {
      complete: await subscribe('operation.complete'),
      failed: await subscribe('operation.failed'),
    };
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await zoom?.close();
  });

  function meetingWithRecording(): FakeMeeting {
    const host = zoom.addUser();
    const meeting = zoom.addMeeting(host.id, {
      uuid: `/rec${Math.random().toString(36).slice(2)}//x==`,
    });
    zoom.addRecording(meeting, [
      file(`${meeting.id}-mp4`, 'MP4', 4000001),
      file(`${meeting.id}-m4a`, 'M4A', 90001),
      file(`${meeting.id}-vtt`, 'TRANSCRIPT', 2001),
      file(undefined, 'TIMELINE', 301),
    ]);
    return meeting;
  }

  const link = (meeting: FakeMeeting, id: string) =>
    `${PUBLIC_BASE_URL}/api/meetings/${encodeURIComponent(meeting.uuid)}/recordings/${id}/download`;
  /** A file as operation.complete lists it, for a file of meetingWithRecording. */
  const notified = (meeting: FakeMeeting, id: string, type: string, size: number) => ({
    id,
    file_type: type,
    file_extension: type === 'TRANSCRIPT' ? 'VTT' : type,
    file_size: size,
    recording_type: 'shared_screen_with_speaker_view',
    recording_start: meeting.start_time,
    recording_end: meeting.start_time,
    status: 'completed',
    download_url: link(meeting, id),
  });

  it('lists the files the platform reports now, filtered and behind this service', async () => {
    const meeting = meetingWithRecording();
    const ids = ['mp4', 'm4a', 'vtt'].map((s) => `${meeting.id}-${s}`);
    expect(
      (await sendZoomEvent(t.baseUrl, eventFor(meeting, 'recording.completed', ids))).status,
    ).toBe(200);
    const [body] = await waitFor(
      () => {
        const got = bodies(paths.complete, meeting.uuid);
        return got.length > 0 && got;
      },
      { what: 'operation.complete' },
    );
    expect(body.data).toEqual({
      ...expectedMeeting(meeting.uuid, { id: String(meeting.id) }),
      // The TIMELINE file is of a kept type, but the event does not name it.
      files: [
        notified(meeting, ids[0], 'MP4', 4000001),
        notified(meeting, ids[2], 'TRANSCRIPT', 2001),
      ],
    });
    // The rewritten link works: this service's download route streams the platform's bytes.
    const download = await fetch(
      `${t.baseUrl}${new URL(body.data.files[0].download_url).pathname}`,
      {
        headers: { authorization: `Bearer ${await t.token()}` },
      },
    );
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      zoom.fileSha256(file(ids[0], 'MP4', 4000001)),
    );
    const calls = zoom.apiRequests().filter((r) => r.apiPath?.endsWith('/recordings'));
    expect(calls.length).toBeGreaterThanOrEqual(1);
    // A uuid with "//" is double-encoded to the platform, and the call carries the S2S token.
    expect(calls.at(-1)?.apiPath).toBe(
      `/meetings/${encodeURIComponent(encodeURIComponent(meeting.uuid))}/recordings`,
    );
    expect(calls.at(-1)?.headers.authorization).toMatch(/^Bearer /);
    expect(JSON.stringify(zoom.requests)).not.toContain('dl-token-never-forwarded');
  });

  it('lists a file without an id (TIMELINE) too, and its link downloads it through the API', async () => {
    const meeting = meetingWithRecording();
    const event = eventFor(meeting, 'recording.completed', [`${meeting.id}-mp4`]);
    const object = event.payload.object as { recording_files: Record<string, unknown>[] };
    object.recording_files.push({ file_type: 'TIMELINE', download_url: 'https://x/stale' });
    await sendZoomEvent(t.baseUrl, event);
    const [body] = await waitFor(
      () => {
        const got = bodies(paths.complete, meeting.uuid);
        return got.length > 0 && got;
      },
      { what: 'operation.complete' },
    );
    const timeline = body.data.files.find((f: Json) => f.file_type === 'TIMELINE');
    expect(timeline).toEqual({
      ...notified(meeting, 'unused', 'TIMELINE', 301),
      id: null,
      download_url: expect.stringMatching(/\/recordings\/timeline-[0-9a-f]{24}\/download$/),
    });
    const download = await fetch(`${t.baseUrl}${new URL(timeline.download_url).pathname}`, {
      headers: { authorization: `Bearer ${await t.token()}` },
    });
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(
      zoom.fileSha256(file(undefined, 'TIMELINE', 301)),
    );
  });

  it('narrows recording.transcript_completed to the files the event names', async () => {
    const meeting = meetingWithRecording();
    const vtt = `${meeting.id}-vtt`;
    await sendZoomEvent(t.baseUrl, eventFor(meeting, 'recording.transcript_completed', [vtt]));
    const [body] = await waitFor(
      () => {
        const got = bodies(paths.complete, meeting.uuid);
        return got.length > 0 && got;
      },
      { what: 'operation.complete' },
    );
    expect(body.source.event).toBe('recording.transcript_completed');
    expect(body.data.files).toEqual([notified(meeting, vtt, 'TRANSCRIPT', 2001)]);
  });

  it('publishes operation.failed after every attempt failed at the platform', async () => {
    const host = zoom.addUser();
    const meeting = zoom.addMeeting(host.id); // no recording: the platform answers 404
    const before = zoom.apiRequests().length;
    await sendZoomEvent(t.baseUrl, eventFor(meeting, 'recording.completed', ['gone']));
    const [body] = await waitFor(
      () => {
        const got = bodies(paths.failed, meeting.uuid);
        return got.length > 0 && got;
      },
      { what: 'operation.failed' },
    );
    expect(body).toMatchObject({
      event: 'operation.failed',
      data: {
        uuid: meeting.uuid,
        id: String(meeting.id),
        error: 'meeting platform call failed (404): This recording does not exist.',
      },
      source: { platform: 'zoom', event: 'recording.completed' },
    });
    const recordingCalls = zoom
      .apiRequests()
      .slice(before)
      .filter((r) =>
        decodeURIComponent(decodeURIComponent(r.apiPath ?? '')).includes(meeting.uuid),
      );
    expect(recordingCalls).toHaveLength(RETRIES + 1);
    expect(bodies(paths.complete, meeting.uuid)).toEqual([]);
  });

  it('keeps the first outcome when an event that ended in operation.failed runs again', async () => {
    const host = zoom.addUser();
    const meeting = zoom.addMeeting(host.id); // no recording yet: every attempt fails
    await sendZoomEvent(t.baseUrl, eventFor(meeting, 'recording.completed', ['late']));
    /** The stored event, once it is marked processed. */
    const processed = async () => {
      const [row] = await queryDatabase<{
        id: string;
        processed_at: Date | null;
        process_error: string | null;
      }>(
        t.database.url,
        `SELECT id, processed_at, process_error FROM inbound_events
         WHERE event = 'recording.completed' AND payload->'payload'->'object'->>'uuid' = $1`,
        [meeting.uuid],
      );
      return row?.processed_at ? row : undefined;
    };
    const failed = await waitFor(processed, { what: 'the event finished with operation.failed' });
    expect(failed.process_error).toMatch(/404/);

    // Now the platform has the recording; and the event is unprocessed again, as when marking
    // it processed failed after operation.failed went out: the sweeper queues it once more.
    zoom.addRecording(meeting, [file(`${meeting.id}-mp4`, 'MP4', 1001)]);
    const before = zoom.apiRequests().length;
    await queryDatabase(
      t.database.url,
      `UPDATE inbound_events SET processed_at = NULL, received_at = now() - interval '1 hour'
       WHERE id = $1`,
      [failed.id],
    );
    const again = await waitFor(processed, { what: 'the event processed again' });

    // One outcome: the events table is the record of every notification published.
    const published = await queryDatabase<{ kind: string }>(
      t.database.url,
      `SELECT kind FROM events WHERE idempotency_key LIKE $1 AND kind NOT LIKE 'zoom.%'`,
      [`inbound:${failed.id}:%`],
    );
    expect(published).toEqual([{ kind: 'operation.failed' }]);
    expect(again.process_error).toBe(failed.process_error);
    // The earlier outcome was found before asking the platform again.
    expect(zoom.apiRequests().slice(before)).toEqual([]);
    await waitFor(() => bodies(paths.failed, meeting.uuid).length > 0, {
      what: 'operation.failed delivered',
    });
    expect(bodies(paths.failed, meeting.uuid)).toHaveLength(1);
    expect(bodies(paths.complete, meeting.uuid)).toEqual([]);
  });
});
