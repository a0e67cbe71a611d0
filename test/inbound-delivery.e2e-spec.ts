import { createHmac } from 'node:crypto';
import { SUBSCRIPTION_EVENTS } from '../src/webhooks/subscription-events';
import { EVENT_MAPPING } from '../src/inbound/event-mapping';
import {
  ACCOUNT_ID,
  ZoomEvent,
  asWebinar,
  meetingEnded,
  meetingStarted,
  meetingUpdated,
  meetingUuid,
  participantJoined,
  participantLeft,
  recordingCompleted,
  registrationCreated,
} from '../scripts/platform/zoom-events';
import { Json, request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { queryDatabase } from './support/test-db';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { expectedMeeting } from './support/zoom-fixtures';
import { sendZoomEvent } from './support/zoom-sender';

const PUBLIC_BASE_URL = 'https://bridge.example.com';

interface Subscriber {
  kind: string;
  path: string;
  secret: string;
}

/** One webhook per subscription event kind, each on its own receiver path. */
async function subscribeOnePerKind(t: TestApp, receiver: Receiver): Promise<Subscriber[]> {
  const token = await t.token();
  return Promise.all(
    SUBSCRIPTION_EVENTS.map(async (kind, i) => {
      const { url, path } = receiver.route({}, kind.replace('.', '-'));
      const secret = `subscriber-secret-${i}-0123456789`;
      const res = await request(t.baseUrl, 'POST', '/api/webhooks', {
        token,
        body: { url, events: [kind], secret },
      });
      if (res.status !== 201) throw new Error(`webhook: ${res.status} ${res.text}`);
      return { kind, path, secret };
    }),
  );
}

const bodyOf = (r: ReceivedRequest): Json => JSON.parse(r.body.toString('utf8'));

/** Notifications received for a meeting uuid, on any path. */
const aboutUuid = (receiver: Receiver, uuid: string) =>
  receiver.received.filter((r) => bodyOf(r).data?.uuid === uuid);

async function inboundRow(t: TestApp, uuid: string, event: string) {
  const rows = await queryDatabase<{
    id: string;
    processed_at: Date | null;
    process_error: string | null;
  }>(
    t.database.url,
    `SELECT id, processed_at, process_error FROM inbound_events WHERE event = $1 AND identity_key LIKE $2`,
    [event, `%${JSON.stringify(uuid).slice(1, -1)}%`],
  );
  return rows[0];
}

describe('inbound events mapped and delivered (role all, event-only recordings)', () => {
  let t: TestApp;
  let receiver: Receiver;
  let subscribers: Subscriber[];
  const pathOf = (kind: string) => subscribers.find((s) => s.kind === kind)!;

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({
      env: {
        PUBLIC_BASE_URL,
        RECORDING_FILE_TYPES: 'MP4,TRANSCRIPT,CC',
        RECORDING_AUTOMATION_MAX_RETRIES: '2',
        RECORDING_AUTOMATION_BACKOFF_MS: '20',
        INBOUND_SWEEP_INTERVAL_MS: '200',
        INBOUND_SWEEP_GRACE_MS: '1000',
      },
    });
    subscribers = await subscribeOnePerKind(t, receiver);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  /**
   * How to make each meeting event, and what its notification adds to the meeting's data;
   * keyed by the part after `meeting.`, since the webinar event of the same name has the same
   * shape (asWebinar).
   */
  const BY_SUFFIX: Record<string, [(uuid: string) => ZoomEvent, Record<string, unknown>]> = {
    started: [(u) => meetingStarted(u), {}],
    ended: [meetingEnded, { end_time: '2025-01-01T10:30:05Z' }],
    participant_joined: [
      (u) => participantJoined(u, 7),
      {
        participant: expect.objectContaining({
          user_id: '16778247',
          user_name: 'Jill Chill 7',
          join_time: '2025-01-01T10:01:40Z',
        }),
      },
    ],
    participant_left: [
      (u) => participantLeft(u, 7),
      {
        participant: expect.objectContaining({
          user_id: '16778247',
          leave_time: '2025-01-01T10:20:00Z',
        }),
      },
    ],
    registration_created: [
      (u) => ownRegistrant(registrationCreated(u, 3), u),
      {
        occurrences: [expect.objectContaining({ occurrence_id: '1735725600000' })],
        registrant: expect.objectContaining({ id: expect.any(String), status: 'approved' }),
      },
    ],
    registration_approved: [
      (u) => {
        const approved = ownRegistrant(registrationCreated(u, 3), u);
        const registrant = (approved.payload.object as { registrant: Record<string, unknown> })
          .registrant;
        delete registrant.status;
        return { ...approved, event: 'meeting.registration_approved' };
      },
      {
        occurrences: [expect.objectContaining({ occurrence_id: '1735725600000' })],
        registrant: expect.objectContaining({ id: expect.any(String) }),
      },
    ],
  };

  /**
   * The approval rules allow one gain per meeting id and registrant id, and every builder
   * here shares the meeting id: each case registers a registrant of its own.
   */
  function ownRegistrant(event: ZoomEvent, uuid: string): ZoomEvent {
    const object = event.payload.object as { registrant: Record<string, unknown> };
    object.registrant.id = `reg-${uuid}`;
    return event;
  }

  // Every platform event the mapping publishes directly (the recording ones go through the
  // automation, tested below), with the kind the mapping names; its unit spec holds the
  // mapping to docs/api.md#platform-events-post-zoomevents. Denials and cancellations publish only after a gain: they are
  // tested with it in inbound-fidelity.e2e-spec.ts.
  const cases = Object.entries(EVENT_MAPPING).flatMap(([name, route]) => {
    if (!('kind' in route) || route.approval === 'withdrawn') return [];
    const [prefix, suffix] = name.split('.');
    const fixture = BY_SUFFIX[suffix];
    const make = (uuid: string): ZoomEvent => {
      if (!fixture || (prefix !== 'meeting' && prefix !== 'webinar')) {
        throw new Error(`no fixture for ${name}: add one to BY_SUFFIX`);
      }
      const event = fixture[0](uuid);
      return prefix === 'webinar' ? asWebinar(event) : event;
    };
    return [[name, route.kind, make, fixture?.[1] ?? {}] as const];
  });

  it('has a delivery case for every platform event of the mapping but the recording ones', () => {
    expect(cases.map(([name]) => name).sort()).toEqual(
      Object.keys(EVENT_MAPPING)
        .filter((name) => !name.startsWith('recording.'))
        .filter((name) => !/registration_(denied|cancelled)$/.test(name))
        .sort(),
    );
  });

  it.each(cases)(
    'delivers %s as %s to its subscriber only, signed',
    async (_name, kind, make, extra) => {
      const uuid = meetingUuid();
      const event = make(uuid);
      expect((await sendZoomEvent(t.baseUrl, event)).body).toEqual({ status: 'accepted' });
      const subscriber = pathOf(kind);
      const [got] = await waitFor(
        () => {
          const list = receiver
            .requests(subscriber.path)
            .filter((r) => bodyOf(r).data.uuid === uuid);
          return list.length > 0 && list;
        },
        { what: `${kind} for ${uuid}` },
      );
      const body = bodyOf(got);
      expect(body).toEqual({
        id: expect.any(String),
        event: kind,
        created_at: expect.stringMatching(/Z$/),
        data: {
          ...expectedMeeting(uuid, { type: event.event.startsWith('webinar.') ? 5 : 8 }),
          ...extra,
        },
        source: {
          platform: 'zoom',
          event: event.event,
          event_ts: event.event_ts,
          account_id: ACCOUNT_ID,
          tracking_id: 'v=2.0;clid=aw1;rid=WEB_4f1e3bd0c0e5a',
          via: 'webhook',
        },
      });
      expect(got.headers['x-service-event']).toBe(kind);
      expect(got.headers['x-service-signature']).toBe(
        createHmac('sha256', subscriber.secret).update(got.body).digest('hex'),
      );
      await waitFor(async () => (await inboundRow(t, uuid, event.event))?.processed_at, {
        what: 'inbound event marked processed',
      });
      // Only the subscriber of this kind heard of it.
      expect(aboutUuid(receiver, uuid).map((r) => r.path)).toEqual([subscriber.path]);
    },
  );

  it('notifies a redelivered event once', async () => {
    const uuid = meetingUuid();
    const first = participantJoined(uuid, 1);
    expect((await sendZoomEvent(t.baseUrl, first)).body).toEqual({ status: 'accepted' });
    await waitFor(() => aboutUuid(receiver, uuid).length > 0, { what: 'first notification' });
    const again = { ...participantJoined(uuid, 1), event_ts: first.event_ts + 5 };
    expect((await sendZoomEvent(t.baseUrl, again)).body).toEqual({ status: 'duplicate' });
    // A later event for the same meeting is delivered; by then a second one would have been too.
    const later = participantJoined(uuid, 2);
    await sendZoomEvent(t.baseUrl, later);
    await waitFor(() => aboutUuid(receiver, uuid).length >= 2, { what: 'second participant' });
    const users = aboutUuid(receiver, uuid).map((r) => bodyOf(r).data.participant.user_id);
    expect(users.sort()).toEqual(['16778241', '16778242']);
  });

  it('stores an unmapped event and marks it processed, publishing it as it is only to who takes it', async () => {
    const before = receiver.received.length;
    const mappedKinds = `SELECT count(*)::int AS n FROM events WHERE kind NOT LIKE 'zoom.%'`;
    const events = await queryDatabase(t.database.url, mappedKinds);
    const unmapped = meetingUpdated(424242);
    expect((await sendZoomEvent(t.baseUrl, unmapped)).body).toEqual({ status: 'accepted' });
    const row = await waitFor(async () => {
      const rows = await queryDatabase<{ processed_at: Date | null; process_error: string | null }>(
        t.database.url,
        `SELECT processed_at, process_error FROM inbound_events WHERE event = 'meeting.updated'`,
      );
      return rows[0]?.processed_at ? rows[0] : undefined;
    });
    expect(row.process_error).toBeNull();
    expect(await queryDatabase(t.database.url, mappedKinds)).toEqual(events);
    // As it is only for webhooks subscribed to zoom.meeting.updated or zoom.*: with none here,
    // the statement that stored it marked it processed and published nothing
    // (test/inbound-fidelity.e2e-spec.ts delivers it to such subscribers).
    const asIs = await queryDatabase<{ n: number }>(
      t.database.url,
      `SELECT count(*)::int AS n FROM events WHERE kind = 'zoom.meeting.updated'`,
    );
    expect(asIs).toEqual([{ n: 0 }]);
    expect(receiver.received.length).toBe(before);
  });

  it('runs the recording automation: files filtered, links rewritten, no platform token', async () => {
    const uuid = '/4444AAAi+AA//AiAiAiiAii==';
    expect(
      (await sendZoomEvent(t.baseUrl, recordingCompleted(uuid, 'secret-dl-token'))).status,
    ).toBe(200);
    const [got] = await waitFor(
      () => {
        const list = receiver.requests(pathOf('operation.complete').path);
        const mine = list.filter((r) => bodyOf(r).data.uuid === uuid);
        return mine.length > 0 && mine;
      },
      { what: 'operation.complete' },
    );
    const body = bodyOf(got);
    const link = (id: string) =>
      `${PUBLIC_BASE_URL}/api/meetings/${encodeURIComponent(uuid)}/recordings/${id}/download`;
    expect(body).toMatchObject({
      event: 'operation.complete',
      data: {
        ...expectedMeeting(uuid),
        // MP4 and CC kept (CC without an id), M4A and TIMELINE filtered out.
        files: [
          {
            id: 'a1b2c3d4-0001',
            file_type: 'MP4',
            file_size: 3400000,
            download_url: link('a1b2c3d4-0001'),
          },
          {
            id: null,
            file_type: 'CC',
            file_size: 1304,
            download_url: expect.stringMatching(/\/recordings\/cc-[0-9a-f]{24}\/download$/),
          },
        ],
      },
      source: {
        platform: 'zoom',
        event: 'recording.completed',
        event_ts: 1735729800000,
        account_id: ACCOUNT_ID,
      },
    });
    expect(got.body.toString()).not.toMatch(/secret-dl-token|zoom\.us|rec-passcode/);
    expect(t.logs.join('\n')).not.toContain('secret-dl-token');
    await waitFor(async () => (await inboundRow(t, uuid, 'recording.completed'))?.processed_at);
    expect(
      receiver
        .requests(pathOf('operation.failed').path)
        .filter((r) => bodyOf(r).data.uuid === uuid),
    ).toEqual([]);
  });

  it('publishes operation.failed at once when the event makes the failure certain (no retry)', async () => {
    const uuid = meetingUuid();
    const broken = recordingCompleted(uuid);
    (broken.payload.object as Record<string, unknown>).recording_files = 'not a list';
    expect((await sendZoomEvent(t.baseUrl, broken)).status).toBe(200);
    const [got] = await waitFor(
      () => {
        const mine = receiver
          .requests(pathOf('operation.failed').path)
          .filter((r) => bodyOf(r).data.uuid === uuid);
        return mine.length > 0 && mine;
      },
      { what: 'operation.failed' },
    );
    expect(bodyOf(got)).toMatchObject({
      event: 'operation.failed',
      data: {
        uuid,
        id: '85746065432',
        error: 'the recording.completed event has no recording_files list',
      },
      source: { event: 'recording.completed' },
    });
    const row = await waitFor(async () => {
      const r = await inboundRow(t, uuid, 'recording.completed');
      return r?.processed_at ? r : undefined;
    });
    expect(row.process_error).toMatch(/no recording_files list/);
    const lines = t.logs.filter((l) => l.includes(row.id));
    expect(lines.filter((l) => l.includes('will retry'))).toHaveLength(0);
    expect(lines.filter((l) => l.includes('final: publishing operation.failed'))).toHaveLength(1);
    expect(
      receiver
        .requests(pathOf('operation.complete').path)
        .filter((r) => bodyOf(r).data.uuid === uuid),
    ).toEqual([]);
  });

  it('recovers a stored event whose job was lost, and reprocessing never notifies twice', async () => {
    // As if Redis lost the job: the row exists, no job was ever queued for it.
    const uuid = meetingUuid();
    const event = meetingEnded(uuid);
    const [{ id }] = await queryDatabase<{ id: string }>(
      t.database.url,
      `INSERT INTO inbound_events (event, identity_key, event_ts, account_id, payload, received_at)
       VALUES ($1, $2, $3, $4, $5, now() - interval '1 hour') RETURNING id`,
      [
        event.event,
        JSON.stringify([event.event, 'uuid', uuid]),
        event.event_ts,
        ACCOUNT_ID,
        JSON.stringify(event),
      ],
    );
    await waitFor(() => aboutUuid(receiver, uuid).length > 0, { what: 'swept event delivered' });
    await waitFor(async () => (await inboundRow(t, uuid, 'meeting.ended'))?.processed_at);

    // As if a worker died after publishing and before marking it processed: swept and run again.
    await queryDatabase(
      t.database.url,
      `UPDATE inbound_events SET processed_at = NULL WHERE id = $1`,
      [id],
    );
    await waitFor(async () => (await inboundRow(t, uuid, 'meeting.ended'))?.processed_at, {
      what: 'reprocessed',
    });
    const events = await queryDatabase(
      t.database.url,
      `SELECT id FROM events WHERE idempotency_key = $1`,
      [`inbound:${id}:job.completed`],
    );
    expect(events).toHaveLength(1);
    expect(aboutUuid(receiver, uuid)).toHaveLength(1);
  });
});
