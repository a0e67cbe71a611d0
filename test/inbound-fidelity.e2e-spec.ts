import { createHash, createHmac } from 'node:crypto';
import { ACCOUNT_ID } from '../src/inbound/sample-events/sample-event';
import { FakeMeeting, FakeRecordingFile, FakeZoom } from './support/fake-zoom';
import { Json, request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { TestApp, ZOOM_SECRET_TOKEN, startTestApp } from './support/test-app';
import { queryDatabase } from './support/test-db';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { ZoomSendOptions, sendZoomEvent } from './support/zoom-sender';
import {
  FixtureBody,
  ZOOM_FIXTURES,
  expectedMeeting,
  fixtureEvent,
  freshUuid,
  partOf,
} from './support/zoom-fixtures';

/**
 * docs/api.md#platform-events-post-zoomevents inbound fidelity, end to end from signed platform events (src/inbound/sample-events)
 * to a local receiver: data as the platform sent it, tracking ids, the approval rules, every
 * recording file with a working link in an event-only deployment, several secret tokens,
 * platform events as they are (zoom.* subscriptions) and exact de-duplication.
 */

const PUBLIC_BASE_URL = 'https://bridge.example.com';
const SECOND_APP_TOKEN = 'second_app_secret_token';
const TRACKING_ID = 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a';
/**
 * How long an event may take from the platform to a subscriber here. waitFor's 15 s is too
 * short on a loaded machine: under stress-ng --cpu 4 a recording.completed took 12.8 s to
 * reach its operation.complete (two queue hops and the recording automation between).
 */
const ARRIVAL_MS = 45_000;
// A test waits for an arrival and then does more (downloads, a second send): Jest's 60 s
// would end it before the wait could say what it was waiting for.
jest.setTimeout(ARRIVAL_MS + 60_000);

const bodyOf = (r: ReceivedRequest): Json => JSON.parse(r.body.toString('utf8'));

/** Sends `body` signed as the platform does (tracking id TRACKING_ID unless told otherwise). */
const send = (t: TestApp, body: unknown, options: ZoomSendOptions = {}) =>
  sendZoomEvent(t.baseUrl, body, { trackingId: TRACKING_ID, ...options });

describe('inbound fidelity (event-only deployment, two secret tokens)', () => {
  let t: TestApp;
  let zoom: FakeZoom;
  let receiver: Receiver;
  const paths: Record<string, string> = {};

  /** Notifications received on one subscriber's path about one meeting uuid. */
  const received = (name: string, uuid: string) =>
    receiver
      .requests(paths[name])
      .map(bodyOf)
      .filter((b) => (b.data?.uuid ?? b.data?.object?.uuid) === uuid);

  /** Waits until `count` notifications reached the path for the uuid, and returns them. */
  const receivedAtLeast = (name: string, uuid: string, count = 1) =>
    waitFor(() => received(name, uuid).length >= count && received(name, uuid), {
      timeoutMs: ARRIVAL_MS,
      what: `${count} notification(s) on ${name} for ${uuid}`,
    });

  /** Waits until every inbound event of the meeting has been processed. */
  async function processed(uuid: string, count: number): Promise<void> {
    await waitFor(
      async () => {
        const [row] = await queryDatabase<{ n: number }>(
          t.database.url,
          `SELECT count(*)::int AS n FROM inbound_events
           WHERE payload->'payload'->'object'->>'uuid' = $1 AND processed_at IS NOT NULL`,
          [uuid],
        );
        return row.n >= count;
      },
      { timeoutMs: ARRIVAL_MS, what: `${count} processed inbound event(s) of ${uuid}` },
    );
  }

  /** Events published (the record, whether or not anyone subscribed) of a kind for a uuid. */
  async function published(kind: string, uuid: string): Promise<number> {
    const [row] = await queryDatabase<{ n: number }>(
      t.database.url,
      `SELECT count(*)::int AS n FROM events WHERE kind = $1 AND data->>'uuid' = $2`,
      [kind, uuid],
    );
    return row.n;
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    zoom = await FakeZoom.start({ redirectDownloads: true });
    t = await startTestApp({
      env: {
        PUBLIC_BASE_URL,
        ZOOM_WEBHOOK_SECRET_TOKEN: `${SECOND_APP_TOKEN}, ${ZOOM_SECRET_TOKEN}`,
        // Event-only: the platform's hosts are known, no server-to-server credentials.
        ZOOM_OAUTH_URL: zoom.baseUrl,
        ZOOM_API_URL: `${zoom.baseUrl}/global/v2`,
        RECORDING_AUTOMATION_BACKOFF_MS: '20',
      },
    });
    const subscriptions: Record<string, string[]> = {
      gained: ['follower.gained'],
      lost: ['follower.lost'],
      jobs: ['job.started', 'job.completed'],
      complete: ['operation.complete'],
      all: ['zoom.*'],
      both: ['zoom.*', 'zoom.meeting.created'],
      created: ['zoom.meeting.created'],
      trashed: ['zoom.recording.trashed'],
    };
    for (const [name, events] of Object.entries(subscriptions)) {
      const { url, path } = receiver.route({}, name);
      paths[name] = path;
      await createWebhook(t, { url, events });
    }
  });
  afterAll(async () => {
    await t?.close();
    await zoom?.close();
    await receiver?.close();
  });

  it('keeps a source note with every fixture', () => {
    for (const [name, fixture] of Object.entries(ZOOM_FIXTURES)) {
      expect(fixture.body.event).toBe(name);
      expect(fixture.source.length).toBeGreaterThan(20);
    }
  });

  describe('data as the platform sent it, and the tracking id', () => {
    it('delivers the participant object whole, the meeting type, duration and timezone', async () => {
      const uuid = freshUuid();
      const joined = fixtureEvent('meeting.participant_joined', uuid);
      expect((await send(t, joined)).body).toEqual({ status: 'accepted' });
      const [got] = await receivedAtLeast('gained', uuid);
      expect(got).toEqual({
        id: expect.any(String),
        event: 'follower.gained',
        created_at: expect.stringMatching(/Z$/),
        data: {
          ...expectedMeeting(uuid),
          participant: partOf(joined, 'participant'),
        },
        source: {
          platform: 'zoom',
          event: 'meeting.participant_joined',
          event_ts: joined.event_ts,
          account_id: ACCOUNT_ID,
          tracking_id: TRACKING_ID,
          via: 'webhook',
        },
      });
      expect(got.data.participant).toMatchObject({
        customer_key: 'crm-contact-349',
        phone_number: '+18001234567',
      });
      const [row] = await queryDatabase<{ id: string; tracking_id: string }>(
        t.database.url,
        `SELECT id, tracking_id FROM inbound_events WHERE payload->'payload'->'object'->>'uuid' = $1`,
        [uuid],
      );
      expect(row.tracking_id).toBe(TRACKING_ID);
      // Logged by the inbound job, which may finish after the notification published with the
      // event has arrived.
      await waitFor(() => t.logs.some((l) => l.includes(row.id) && l.includes(TRACKING_ID)), {
        what: 'a log line naming the inbound event and its tracking id',
      });
    });

    it('delivers the registrant whole (address, custom questions) and the occurrences', async () => {
      const uuid = freshUuid();
      const created = fixtureEvent('meeting.registration_created', uuid);
      await send(t, created);
      const [got] = await receivedAtLeast('gained', uuid);
      expect(got.data.registrant).toEqual(partOf(created, 'registrant'));
      expect(got.data.registrant).toMatchObject({
        address: '1800 Amphibious Blvd.',
        phone: '5550100',
        org: 'Cooking Org',
        custom_questions: [{ title: 'What do you hope to learn from this?', value: 'Make food' }],
      });
      expect(got.data.occurrences).toEqual(created.payload.object.occurrences);
      expect(got.data).toMatchObject({ type: 8, duration: 30, timezone: 'Europe/Berlin' });
    });

    it('sends tracking_id null when the platform sent no x-zm-trackingid', async () => {
      const uuid = freshUuid();
      await send(t, fixtureEvent('meeting.started', uuid), { trackingId: null });
      const [got] = await receivedAtLeast('jobs', uuid);
      expect(got.source.tracking_id).toBeNull();
    });
  });

  describe('registration approval', () => {
    const registrantOf = (uuid: string) =>
      `reg-${createHash('sha256').update(uuid).digest('hex').slice(0, 16)}`;
    /**
     * A registration event of the fixture meeting (whose id every fixture shares), by a
     * registrant of its own per test: the rules key on the meeting id and the registrant id.
     */
    const registration = (event: string, uuid: string, status?: string, occurrence?: string) => {
      const body = fixtureEvent(event, uuid);
      partOf(body, 'registrant').id = registrantOf(uuid);
      if (status !== undefined) partOf(body, 'registrant').status = status;
      if (occurrence !== undefined) {
        body.payload.object.occurrences = [
          { occurrence_id: occurrence, start_time: '2025-01-08T10:00:00Z', duration: 30 },
        ];
      }
      return body;
    };

    it('gains a pending registrant only once it is approved', async () => {
      const uuid = freshUuid();
      await send(t, registration('meeting.registration_created', uuid, 'pending'));
      await processed(uuid, 1);
      expect(await published('follower.gained', uuid)).toBe(0);

      await send(t, registration('meeting.registration_approved', uuid));
      const [gained] = await receivedAtLeast('gained', uuid);
      expect(gained.source.event).toBe('meeting.registration_approved');
      expect(gained.data.registrant.id).toBe(registrantOf(uuid));
    });

    it('gains a registrant once, however many approvals arrive', async () => {
      const uuid = freshUuid();
      await send(t, registration('meeting.registration_created', uuid, 'approved'));
      await send(t, registration('meeting.registration_approved', uuid));
      await processed(uuid, 2);
      expect(await published('follower.gained', uuid)).toBe(1);
      const [gained] = await receivedAtLeast('gained', uuid);
      expect(gained.data.registrant.id).toBe(registrantOf(uuid));
      // A later event of the meeting is delivered; a second gain would have been by then.
      await send(t, fixtureEvent('meeting.participant_joined', uuid));
      await receivedAtLeast('gained', uuid, 2);
      expect(received('gained', uuid).filter((b) => b.data.registrant)).toHaveLength(1);
    });

    it('publishes nothing for a denied registrant that was never gained', async () => {
      const uuid = freshUuid();
      await send(t, registration('meeting.registration_created', uuid, 'pending'));
      await send(t, registration('meeting.registration_denied', uuid));
      await processed(uuid, 2);
      expect(await published('follower.gained', uuid)).toBe(0);
      expect(await published('follower.lost', uuid)).toBe(0);
    });

    it('loses a gained registrant once, when cancelled (or denied) after the gain', async () => {
      const uuid = freshUuid();
      await send(t, registration('meeting.registration_created', uuid));
      await receivedAtLeast('gained', uuid);
      await send(t, registration('meeting.registration_cancelled', uuid));
      const [lost] = await receivedAtLeast('lost', uuid);
      expect(lost).toMatchObject({
        event: 'follower.lost',
        data: { registrant: { id: registrantOf(uuid) } },
        source: { event: 'meeting.registration_cancelled', tracking_id: TRACKING_ID },
      });
      await send(t, registration('meeting.registration_denied', uuid));
      await processed(uuid, 3);
      expect(await published('follower.lost', uuid)).toBe(1);
    });

    it('cancels nothing for a registrant never gained (webinar)', async () => {
      const uuid = freshUuid();
      await send(t, registration('webinar.registration_cancelled', uuid));
      await processed(uuid, 1);
      expect(await published('follower.lost', uuid)).toBe(0);
    });

    it('gains one registrant once per occurrence', async () => {
      const uuid = freshUuid();
      await send(
        t,
        registration('meeting.registration_created', uuid, 'approved', '1736330400000'),
      );
      await send(
        t,
        registration('meeting.registration_created', uuid, 'approved', '1736935200000'),
      );
      const both = await receivedAtLeast('gained', uuid, 2);
      expect(both.map((b) => b.data.occurrences[0].occurrence_id).sort()).toEqual([
        '1736330400000',
        '1736935200000',
      ]);
      // A redelivery of one occurrence's registration is a duplicate.
      const again = registration('meeting.registration_created', uuid, 'approved', '1736330400000');
      expect((await send(t, { ...again, event_ts: again.event_ts + 1 })).body).toEqual({
        status: 'duplicate',
      });
    });
  });

  describe('recording files of an event-only deployment', () => {
    let meeting: FakeMeeting;
    let files: FakeRecordingFile[];
    let event: FixtureBody;
    const downloadToken = () => event.download_token as string;

    beforeAll(() => {
      const host = zoom.addUser();
      meeting = zoom.addMeeting(host.id);
      files = [
        {
          id: `mp4-${meeting.id}`,
          file_type: 'MP4',
          file_extension: 'MP4',
          file_size: 300_000,
          recording_type: 'shared_screen_with_speaker_view',
          content_type: 'video/mp4',
        },
        {
          id: `m4a-${meeting.id}`,
          file_type: 'M4A',
          file_extension: 'M4A',
          file_size: 95_663,
          recording_type: 'audio_only',
          content_type: 'audio/mp4',
        },
        {
          file_type: 'CC',
          file_extension: 'VTT',
          file_size: 1_304,
          recording_type: 'closed_caption',
          content_type: 'text/vtt',
        },
        {
          file_type: 'TIMELINE',
          file_extension: 'JSON',
          file_size: 33,
          recording_type: 'timeline',
          content_type: 'application/json',
        },
      ];
      zoom.addRecording(meeting, files);
      // The fixture's files, with the fake platform's ids and download URLs.
      event = fixtureEvent('recording.completed', meeting.uuid);
      event.download_token = zoom.issueDownloadToken();
      const onPlatform = zoom.recordingFilesOf(meeting);
      const listed = event.payload.object.recording_files as Record<string, unknown>[];
      listed.forEach((file, i) => {
        if (files[i].id === undefined) delete file.id;
        else file.id = files[i].id;
        file.download_url = onPlatform[i].download_url;
      });
    });

    it('lists every file with its fields, and each link downloads its bytes', async () => {
      expect((await send(t, event)).body).toEqual({ status: 'accepted' });
      const [got] = await receivedAtLeast('complete', meeting.uuid);
      const listed = event.payload.object.recording_files as Record<string, unknown>[];
      expect(got.data.files).toEqual(
        listed.map((file) => ({
          id: file.id ?? null,
          file_type: file.file_type,
          file_extension: file.file_extension,
          file_size: file.file_size,
          recording_type: file.recording_type,
          recording_start: '2025-01-01T10:00:10Z',
          recording_end: '2025-01-01T10:29:50Z',
          status: 'completed',
          download_url: expect.stringMatching(
            new RegExp(`^${PUBLIC_BASE_URL}/api/meetings/[^/]+/recordings/[^/]+/download$`),
          ),
        })),
      );
      const token = await t.token('alpha', 'recordings:read');
      for (const [i, file] of (got.data.files as { download_url: string }[]).entries()) {
        const res = await fetch(file.download_url.replace(PUBLIC_BASE_URL, t.baseUrl), {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(res.status).toBe(200);
        const bytes = Buffer.from(await res.arrayBuffer());
        expect(bytes.length).toBe(files[i].file_size);
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(zoom.fileSha256(files[i]));
      }
      // The platform saw the event's token, as ?access_token=, and no bearer token.
      const downloads = zoom.requests.filter((r) => r.rawPath.startsWith('/rec/download/'));
      expect(downloads).toHaveLength(files.length);
      for (const r of downloads) {
        expect(r.query.get('access_token')).toBe(downloadToken());
        expect(r.headers.authorization).toBeUndefined();
      }
    });

    it('keeps the token only encrypted, never in a notification or a log line', async () => {
      await receivedAtLeast('complete', meeting.uuid);
      const rows = await queryDatabase<Record<string, unknown>>(
        t.database.url,
        `SELECT i.payload::text AS payload, i.download_token_encrypted, d.download_token_encrypted AS link_token
         FROM inbound_events i, recording_downloads d
         WHERE i.event = 'recording.completed' AND i.payload->'payload'->'object'->>'uuid' = $1
           AND d.meeting_key = $1`,
        [meeting.uuid],
      );
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) {
        expect(row.payload).not.toContain(downloadToken());
        // Processed: the event's own copy is gone; the links keep theirs, encrypted.
        expect(row.download_token_encrypted).toBeNull();
        expect(row.link_token).toMatch(/^v1\./);
        expect(row.link_token).not.toContain(downloadToken());
      }
      expect(receiver.received.some((r) => r.body.includes(downloadToken()))).toBe(false);
      expect(t.logs.join('\n')).not.toContain(downloadToken());
    });

    it('delivers a second recording.completed of the meeting with new files, and not a redelivery', async () => {
      await receivedAtLeast('complete', meeting.uuid);
      const redelivery = structuredClone(event);
      redelivery.download_token = zoom.issueDownloadToken();
      expect((await send(t, redelivery)).body).toEqual({ status: 'duplicate' });

      const restarted = structuredClone(event);
      const listed = restarted.payload.object.recording_files as Record<string, unknown>[];
      restarted.payload.object.recording_files = [
        {
          ...listed[0],
          id: `${listed[0].id as string}-part2`,
          recording_start: '2025-01-01T10:40:00Z',
        },
      ];
      expect((await send(t, restarted)).body).toEqual({ status: 'accepted' });
      const both = await receivedAtLeast('complete', meeting.uuid, 2);
      expect(both[1].data.files.map((f: { id: string }) => f.id)).toEqual([
        `mp4-${meeting.id}-part2`,
      ]);
    });
  });

  describe('several secret tokens', () => {
    it('accepts events signed with either token and refuses any other', async () => {
      const uuid = freshUuid();
      const started = fixtureEvent('meeting.started', uuid);
      expect((await send(t, started, { secret: SECOND_APP_TOKEN })).status).toBe(200);
      const ended = fixtureEvent('meeting.ended', uuid);
      expect((await send(t, ended, { secret: ZOOM_SECRET_TOKEN })).status).toBe(200);
      const other = fixtureEvent('meeting.started', freshUuid());
      const refused = await send(t, other, { secret: 'a_third_token' });
      expect(refused.status).toBe(401);
      expect(await receivedAtLeast('jobs', uuid, 2)).toHaveLength(2);
    });

    it('answers the URL validation with the token that verified it', async () => {
      const validation = ZOOM_FIXTURES['endpoint.url_validation'].body;
      const plainToken = validation.payload.plainToken as unknown as string;
      const bySecond = await send(t, validation, { secret: SECOND_APP_TOKEN });
      expect(bySecond.body).toEqual({
        plainToken,
        encryptedToken: createHmac('sha256', SECOND_APP_TOKEN).update(plainToken).digest('hex'),
      });
      const byFirst = await send(t, validation, { secret: ZOOM_SECRET_TOKEN });
      // The platform's own vector for this secret and plainToken.
      expect(byFirst.body).toEqual({
        plainToken,
        encryptedToken: '4efea922935c335d972476de138d2208a0d46ab28c79ee592d497a1b216419b8',
      });
    });
  });

  describe('platform events as they are (zoom.* and zoom.<event>)', () => {
    it('delivers an unmapped event to zoom.* and zoom.<event> subscribers, once each', async () => {
      const uuid = freshUuid();
      const created = fixtureEvent('meeting.created', uuid);
      expect((await send(t, created)).body).toEqual({ status: 'accepted' });
      for (const name of ['all', 'both', 'created']) {
        const [got] = await receivedAtLeast(name, uuid);
        expect(got).toEqual({
          id: expect.any(String),
          event: 'zoom.meeting.created',
          created_at: expect.stringMatching(/Z$/),
          data: created.payload,
          source: {
            platform: 'zoom',
            event: 'meeting.created',
            event_ts: created.event_ts,
            account_id: ACCOUNT_ID,
            tracking_id: TRACKING_ID,
            via: 'webhook',
          },
        });
      }
      // Another event of the meeting arrives after; by then a second delivery would have too.
      await send(t, fixtureEvent('recording.trashed', uuid));
      await receivedAtLeast('trashed', uuid);
      await receivedAtLeast('both', uuid, 2);
      expect(
        received('both', uuid)
          .map((b) => b.event)
          .sort(),
      ).toEqual(['zoom.meeting.created', 'zoom.recording.trashed']);
      expect(received('created', uuid)).toHaveLength(1);
      expect(received('trashed', uuid).map((b) => b.event)).toEqual(['zoom.recording.trashed']);
      const [delivery] = receiver.requests(paths.created);
      expect(delivery.headers['x-service-event']).toBe('zoom.meeting.created');
    });

    it('delivers a mapped event once as its kind and once as it is, however often it is published', async () => {
      // Published as job.started in the statement that stores it; left unprocessed for the
      // inbound worker because a webhook takes it as it is, and the worker's second publish of
      // job.started (under the same key) adds nothing.
      const uuid = freshUuid();
      await send(t, fixtureEvent('meeting.started', uuid));
      const [mapped] = await receivedAtLeast('jobs', uuid);
      const [asIs] = await receivedAtLeast('all', uuid);
      await processed(uuid, 1);
      expect(mapped).toMatchObject({
        event: 'job.started',
        source: { event: 'meeting.started', tracking_id: TRACKING_ID },
      });
      expect(asIs).toMatchObject({ event: 'zoom.meeting.started' });
      const [row] = await queryDatabase<{ n: number }>(
        t.database.url,
        `SELECT count(*)::int AS n FROM events WHERE kind = 'job.started' AND data->>'uuid' = $1`,
        [uuid],
      );
      expect(row.n).toBe(1);
      expect(received('jobs', uuid)).toHaveLength(1);
      expect(received('all', uuid)).toHaveLength(1);
    });

    it('delivers mapped events as they are too, without the download_token', async () => {
      const uuid = freshUuid();
      const joined = fixtureEvent('meeting.participant_joined', uuid);
      await send(t, joined);
      const [asIs] = await receivedAtLeast('all', uuid);
      expect(asIs).toMatchObject({
        event: 'zoom.meeting.participant_joined',
        data: joined.payload,
      });

      const recording = fixtureEvent('recording.completed', uuid);
      await send(t, recording);
      await receivedAtLeast('all', uuid, 2);
      const forwarded = received('all', uuid).find((b) => b.event === 'zoom.recording.completed');
      expect(forwarded.data).toEqual(recording.payload);
      expect(JSON.stringify(forwarded)).not.toContain(recording.download_token);
    });

    it('validates zoom.<event> names in webhook subscriptions', async () => {
      const token = await t.token();
      const url = receiver.route({}, 'validation').url;
      for (const bad of [
        'zoom.Meeting.created',
        'zoom.meeting',
        'zoom.*.*',
        'zoom.meeting.created.x',
      ]) {
        const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
          token,
          body: { url, events: [bad], secret: 'a-secret-of-enough-length' },
        });
        expect(res.status).toBe(400);
        expect(res.body.details).toEqual([
          { field: 'events', message: expect.stringContaining('unknown event kind') },
        ]);
      }
      const ok = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: {
          url,
          events: ['zoom.*', 'zoom.user.deactivated', 'job.started'],
          secret: 'a-secret-of-enough-length',
        },
      });
      expect(ok.status).toBe(201);
      expect(ok.body.events).toEqual(['zoom.*', 'zoom.user.deactivated', 'job.started']);
    });
  });

  describe('exact de-duplication', () => {
    it('notifies a participant leaving twice twice, and a redelivered leave once', async () => {
      const uuid = freshUuid();
      const first = fixtureEvent('meeting.participant_left', uuid);
      const second = fixtureEvent('meeting.participant_left', uuid);
      partOf(second, 'participant').leave_time = '2025-01-01T10:45:00Z';
      expect((await send(t, first)).body).toEqual({ status: 'accepted' });
      expect((await send(t, second)).body).toEqual({ status: 'accepted' });
      expect((await send(t, { ...first, event_ts: first.event_ts + 9 })).body).toEqual({
        status: 'duplicate',
      });
      const both = await receivedAtLeast('lost', uuid, 2);
      expect(both.map((b) => b.data.participant.leave_time).sort()).toEqual([
        '2025-01-01T10:20:00Z',
        '2025-01-01T10:45:00Z',
      ]);
      await processed(uuid, 2);
      expect(await published('follower.lost', uuid)).toBe(2);
    });
  });

  describe('numbers and payloads exactly as the platform sent them (docs/receiving.md)', () => {
    /** Signs and sends exact bytes, as the platform would. */
    const sendText = (text: string) => {
      return sendZoomEvent(t.baseUrl, Buffer.from(text, 'utf8'));
    };
    /** The raw bodies delivered on a subscriber's path that hold `marker`. */
    const rawReceived = (name: string, marker: string) =>
      receiver
        .requests(paths[name])
        .map((r) => r.body.toString('utf8'))
        .filter((body) => body.includes(marker));
    const rawReceivedOne = (name: string, marker: string) =>
      waitFor(() => rawReceived(name, marker)[0], {
        what: `a delivery on ${name} holding ${marker.slice(0, 60)}`,
        timeoutMs: 30_000,
      });
    /** The event lookup's answer as its exact text. */
    async function lookupText(eventId: string): Promise<string> {
      const res = await fetch(`${t.baseUrl}/api/events/${eventId}`, {
        headers: { authorization: `Bearer ${await t.token()}` },
      });
      expect(res.status).toBe(200);
      return res.text();
    }
    /** A participant_joined fixture whose participant holds `numbers` (JSON text) as `extra`. */
    function joinedWith(uuid: string, numbers: string): string {
      const event = fixtureEvent('meeting.participant_joined', uuid);
      partOf(event, 'participant').extra = '__NUMBERS__';
      return JSON.stringify(event).replace('"__NUMBERS__"', numbers);
    }

    it('delivers, maps and shows every number by its own text', async () => {
      const uuid = freshUuid();
      const numbers =
        '{"huge":1e400,"money":1.50,"hundred":1E2,"negative_zero":-0,"tiny":1e-400,' +
        '"small":0.0000001,"fraction":0.12345678901234567890123,"max":9223372036854775807,' +
        '"list":[1.0,-0.0,2E-3]}';
      expect((await sendText(joinedWith(uuid, numbers))).body).toEqual({ status: 'accepted' });
      const asIs = await rawReceivedOne('all', uuid);
      expect(asIs).toContain(`"extra":${numbers}`);
      const mapped = await rawReceivedOne('gained', uuid);
      expect(mapped).toContain(`"extra":${numbers}`);
      // The lookup shows what was sent, for the event as it came and for the mapped one.
      for (const body of [asIs, mapped]) {
        const id = (JSON.parse(body) as { id: string }).id;
        expect(await lookupText(id)).toContain(`"extra":${numbers}`);
      }
    });

    it('keeps a 16 KB event of 1e15990 × 2,000 at its own size, delivered and stored', async () => {
      const uuid = freshUuid();
      const numbers = `[${Array.from({ length: 2000 }, () => '1e15990').join(',')}]`;
      const text = joinedWith(uuid, numbers);
      expect(text.length).toBeLessThan(20_000);
      expect((await sendText(text)).status).toBe(200);
      const asIs = await rawReceivedOne('all', uuid);
      expect(asIs).toContain(`"extra":${numbers}`);
      expect(asIs.length).toBeLessThan(2 * text.length);
      const mapped = await rawReceivedOne('gained', uuid);
      expect(mapped.length).toBeLessThan(2 * text.length);
      // The record costs about what came, not 32 MB.
      const rows = await queryDatabase<{ stored: number; events: number }>(
        t.database.url,
        `SELECT octet_length(i.payload::text) + coalesce(octet_length(i.raw_body), 0) AS stored,
           (SELECT max(octet_length(e.data::text) + octet_length(e.body)) FROM events e
            WHERE e.body LIKE '%' || $1 || '%') AS events
         FROM inbound_events i WHERE i.payload->'payload'->'object'->>'uuid' = $1`,
        [uuid],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].stored).toBeLessThan(4 * text.length);
      expect(rows[0].events).toBeLessThan(4 * text.length);
    });

    it('delivers an event holding numbers numeric cannot hold (1e-17000, 17,000 decimals)', async () => {
      for (const extra of ['1e-17000', `0.${'3'.repeat(17_000)}`]) {
        const uuid = freshUuid();
        expect((await sendText(joinedWith(uuid, extra))).body).toEqual({ status: 'accepted' });
        expect(await rawReceivedOne('all', uuid)).toContain(`"extra":${extra}`);
        expect(await rawReceivedOne('gained', uuid)).toContain(`"extra":${extra}`);
      }
    });

    it('stores and answers 200 a payload that is null, a string or an array, delivered as it came', async () => {
      const before = await unmappableCount('meeting.started');
      const marker = freshUuid();
      const payloads = ['null', `"${marker}"`, `[{"marker":"${marker}"},1.50]`];
      const eventTs = Date.now();
      for (const [i, payload] of payloads.entries()) {
        const text = `{"event":"meeting.started","event_ts":${eventTs + i},"payload":${payload}}`;
        const res = await sendText(text);
        expect({ payload, status: res.status, body: res.body }).toEqual({
          payload,
          status: 200,
          body: { status: 'accepted' },
        });
      }
      const delivered = await waitFor(
        () => {
          const bodies = receiver
            .requests(paths.all)
            .map((r) => r.body.toString('utf8'))
            .filter((b) => b.includes(`"event":"zoom.meeting.started"`))
            .filter((b) => [0, 1, 2].some((i) => b.includes(`"event_ts":${eventTs + i},`)));
          return bodies.length === 3 && bodies;
        },
        { what: 'the three odd payloads delivered to zoom.*' },
      );
      const dataOf = (i: number) => {
        const body = delivered.find((b) => b.includes(`"event_ts":${eventTs + i},`))!;
        return body.slice(body.indexOf('"data":') + 7, body.indexOf(',"source":'));
      };
      expect([0, 1, 2].map(dataOf)).toEqual(payloads);
      expect(await unmappableCount('meeting.started')).toBe(before + 3);
      // Nothing was mapped from them.
      expect(rawReceived('jobs', marker)).toEqual([]);
    });

    async function unmappableCount(event: string): Promise<number> {
      const metrics = await (await fetch(`${t.baseUrl}/metrics`)).text();
      const line = metrics
        .split('\n')
        .find((l) =>
          l.startsWith(`inbound_events_total{event="${event}",outcome="unmappable",via="webhook"}`),
        );
      return line === undefined ? 0 : Number(line.split(' ').pop());
    }
  });
});
