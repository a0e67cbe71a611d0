import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ORDERING_HEADER } from '../src/dispatcher/engine/delivery-sender.service';
import { request } from './support/http';
import { ReceivedRequest, Receiver, startReceiver } from './support/receiver';
import { SpawnedApp, startWorker } from './support/spawn-app';
import { TestApp, startTestApp } from './support/test-app';
import { waitFor } from './support/wait-for';
import { createWebhook } from './support/webhooks';
import { FixtureBody, fixtureEvent, partOf } from './support/zoom-fixtures';
import { sendAccepted, sendZoomEvent } from './support/zoom-sender';

/**
 * docs/receiving.md#ordered-delivery-per-meeting: a webhook with `ordering: "meeting"` gets the deliveries of one meeting one at a
 * time, in event_ts order, whatever the receiver's failures, across worker processes and a
 * SIGKILL; other meetings go on meanwhile; a late event is still sent, marked.
 */

/** A seeded generator (mulberry32): the same failures every run, for a given arrival order. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fails 30% of requests, at random from `seed`, by arrival: 500 then, 200 otherwise. */
function flaky(seed: number): (request: ReceivedRequest, index: number) => { status: number } {
  const random = seeded(seed);
  const draws: number[] = [];
  return (_request, index) => {
    while (draws.length <= index) draws.push(random());
    return { status: draws[index] < 0.3 ? 500 : 200 };
  };
}

/** The `n`th participant_joined of meeting `uuid` (a follower.gained each), at event_ts `ts`. */
function joined(uuid: string, n: number, ts: number): FixtureBody {
  const body = fixtureEvent('meeting.participant_joined', uuid);
  body.event_ts = ts;
  Object.assign(partOf(body, 'participant'), {
    user_id: String(1000 + n),
    participant_uuid: `${uuid}-participant-${n}`,
    join_time: new Date(ts).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  });
  return body;
}

interface Arrival {
  uuid: string;
  ts: number;
  delivery: string;
  request: ReceivedRequest;
}

function arrivalsOf(requests: ReceivedRequest[]): Arrival[] {
  return requests.map((request) => {
    const body = JSON.parse(request.body.toString('utf8')) as {
      data: { uuid: string };
      source: { event_ts: number };
    };
    return {
      uuid: body.data.uuid,
      ts: body.source.event_ts,
      delivery: String(request.headers['x-service-delivery']),
      request,
    };
  });
}

function byMeeting(arrivals: Arrival[]): Map<string, Arrival[]> {
  const meetings = new Map<string, Arrival[]>();
  for (const arrival of arrivals) {
    meetings.set(arrival.uuid, [...(meetings.get(arrival.uuid) ?? []), arrival]);
  }
  for (const list of meetings.values()) {
    list.sort((a, b) => a.request.receivedAt - b.request.receivedAt);
  }
  return meetings;
}

/** event_ts of each delivery's first successful arrival, in the order they arrived. */
const firstSuccesses = (arrivals: Arrival[]): number[] => {
  const seen = new Set<string>();
  const out: number[] = [];
  for (const a of arrivals) {
    if (a.request.status !== 200 || seen.has(a.delivery)) continue;
    seen.add(a.delivery);
    out.push(a.ts);
  }
  return out;
};

const isIncreasing = (list: number[]): boolean => list.every((v, i) => i === 0 || v > list[i - 1]);

/**
 * Pairs of one meeting's requests that were open at once: one received before the one before
 * it was answered. A request never answered (its sender died) is left out.
 */
const overlaps = (arrivals: Arrival[]): number => {
  const answered = arrivals.filter((a) => a.request.answeredAt !== undefined);
  let count = 0;
  for (let i = 1; i < answered.length; i++) {
    if (answered[i].request.receivedAt < answered[i - 1].request.answeredAt!) count++;
  }
  return count;
};

/** 30 meetings' events interleaved at random, each meeting's in event_ts order. */
function interleaved(
  meetings: number,
  events: number,
  random: () => number,
): { uuid: string; n: number; ts: number }[] {
  const uuids = Array.from(
    { length: meetings },
    (_, m) => `m${m}-${randomBytes(6).toString('hex')}`,
  );
  const next = uuids.map(() => 0);
  const out: { uuid: string; n: number; ts: number }[] = [];
  const base = 1_767_000_000_000;
  while (out.length < meetings * events) {
    const open = uuids.map((_, m) => m).filter((m) => next[m] < events);
    const m = open[Math.floor(random() * open.length)];
    const n = next[m]++;
    out.push({ uuid: uuids[m], n, ts: base + n * 1000 + m });
  }
  return out;
}

/**
 * POSTs the events as the platform would, several at once, but one meeting's one after the
 * other (each is stored before the next is sent): the order a meeting's events have is theirs.
 */
async function postAll(
  baseUrl: string,
  events: { uuid: string; n: number; ts: number }[],
  parallel = 8,
): Promise<void> {
  const chains = new Map<string, Promise<void>>();
  const running = new Set<Promise<void>>();
  for (const e of events) {
    while (running.size >= parallel) await Promise.race(running);
    const previous = chains.get(e.uuid) ?? Promise.resolve();
    const sent: Promise<void> = previous.then(async () => {
      await sendAccepted(baseUrl, joined(e.uuid, e.n, e.ts));
    });
    chains.set(e.uuid, sent);
    const tracked = sent.finally(() => running.delete(tracked));
    running.add(tracked);
  }
  await Promise.all(running);
}

const MEETINGS = 30;
const EVENTS = 10;
const ENV = {
  DELIVERY_BACKOFF_MS: '30',
  DELIVERY_MAX_RETRIES: '12',
};

describe('ordered delivery per meeting (one process)', () => {
  let t: TestApp;
  let receiver: Receiver;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([startTestApp({ env: ENV }), startReceiver()]);
  });
  afterAll(() => Promise.all([receiver.close(), t.close()]));

  it('30 meetings × 10 events through a receiver failing 30%: in order per meeting, one at a time; without ordering, out of order', async () => {
    const events = interleaved(MEETINGS, EVENTS, seeded(31));
    const stuck = events[0].uuid;
    const orderedFlaky = flaky(7);
    let stuckFailures = 0;
    const ordered = receiver.route(
      {
        delaysMs: [5],
        // One meeting's receiver keeps failing: three 500s, then 503 for an hour.
        respond: (req, index) => {
          if (!req.body.includes(stuck)) return orderedFlaky(req, index);
          return ++stuckFailures <= 3
            ? { status: 500 }
            : { status: 503, headers: { 'retry-after': '3600' } };
        },
      },
      'ordered',
    );
    const unordered = receiver.route({ delaysMs: [5], respond: flaky(7) }, 'unordered');
    await createWebhook(t, { url: ordered.url, events: ['follower.gained'], ordering: 'meeting' });
    await createWebhook(t, { url: unordered.url, events: ['follower.gained'] });

    await postAll(t.baseUrl, events);

    const successes = (path: string, uuid: string) =>
      new Set(
        arrivalsOf(receiver.requests(path))
          .filter((a) => a.uuid === uuid && a.request.status === 200)
          .map((a) => a.delivery),
      ).size;
    const others = [...new Set(events.map((e) => e.uuid))].filter((uuid) => uuid !== stuck);
    await waitFor(() => others.every((uuid) => successes(ordered.path, uuid) === EVENTS), {
      timeoutMs: 120000,
      what: 'every event of the 29 other meetings delivered to the ordered webhook',
    });
    await waitFor(
      () =>
        [stuck, ...others].every((uuid) => successes(unordered.path, uuid) === EVENTS) &&
        stuckFailures >= 4,
      { timeoutMs: 120000, what: 'every event delivered to the unordered webhook' },
    );

    const orderedMeetings = byMeeting(arrivalsOf(receiver.requests(ordered.path)));
    for (const uuid of others) {
      const arrivals = orderedMeetings.get(uuid)!;
      expect({ uuid, ts: firstSuccesses(arrivals), ordered: true }).toEqual({
        uuid,
        ts: [...firstSuccesses(arrivals)].sort((a, b) => a - b),
        ordered: isIncreasing(firstSuccesses(arrivals)),
      });
      expect({ uuid, overlaps: overlaps(arrivals) }).toEqual({ uuid, overlaps: 0 });
    }
    // The failing meeting holds itself alone: only its first event was ever tried.
    const stuckArrivals = orderedMeetings.get(stuck)!;
    expect(stuckArrivals.length).toBeGreaterThanOrEqual(4);
    expect(new Set(stuckArrivals.map((a) => a.ts))).toEqual(
      new Set([Math.min(...events.filter((e) => e.uuid === stuck).map((e) => e.ts))]),
    );
    expect(overlaps(stuckArrivals)).toBe(0);

    // The same events, the same failures, no ordering: the test can tell.
    const unorderedMeetings = byMeeting(arrivalsOf(receiver.requests(unordered.path)));
    let reordered = 0;
    let overlapping = 0;
    for (const arrivals of unorderedMeetings.values()) {
      if (!isIncreasing(firstSuccesses(arrivals))) reordered++;
      overlapping += overlaps(arrivals);
    }
    expect({ reordered: reordered > 0, overlapping: overlapping > 0 }).toEqual({
      reordered: true,
      overlapping: true,
    });
  }, 240000);

  it('composes with max_in_flight and rate_limit: at most max_in_flight meetings at once, each in order', async () => {
    const route = receiver.route({ delaysMs: [15], respond: flaky(11) }, 'limited');
    const webhook = await createWebhook(t, {
      url: route.url,
      events: ['follower.gained'],
      ordering: 'meeting',
    });
    const patched = await request(t.baseUrl, 'PATCH', `/api/webhooks/${webhook.id}`, {
      token: await t.token(),
      body: { max_in_flight: 3, rate_limit: 50 },
    });
    expect(patched.body).toMatchObject({ ordering: 'meeting', max_in_flight: 3, rate_limit: 50 });
    const meetings = 8;
    await postAll(t.baseUrl, interleaved(meetings, 5, seeded(23)));
    const distinct = () =>
      new Set(
        arrivalsOf(receiver.requests(route.path))
          .filter((a) => a.request.status === 200)
          .map((a) => a.delivery),
      ).size;
    await waitFor(() => distinct() === meetings * 5, {
      timeoutMs: 120000,
      what: 'every delivery to the limited webhook',
    });
    const arrivals = arrivalsOf(receiver.requests(route.path));
    for (const [uuid, list] of byMeeting(arrivals)) {
      expect({
        uuid,
        ordered: isIncreasing(firstSuccesses(list)),
        overlaps: overlaps(list),
      }).toEqual({ uuid, ordered: true, overlaps: 0 });
    }
    // Requests open at once, across meetings: never more than max_in_flight.
    const open = arrivals.map(
      (a) =>
        arrivals.filter(
          (b) =>
            b.request.receivedAt <= a.request.receivedAt &&
            (b.request.answeredAt ?? Infinity) > a.request.receivedAt,
        ).length,
    );
    expect(Math.max(...open)).toBeLessThanOrEqual(3);
  }, 180000);

  it('sends a late event marked x-service-ordering: late, and a replay in event_ts order', async () => {
    const route = receiver.route({}, 'late');
    const webhook = await createWebhook(t, {
      url: route.url,
      events: ['follower.gained'],
      ordering: 'meeting',
    });
    const since = new Date(Date.now() - 1000).toISOString();
    const uuid = `late-${randomBytes(6).toString('hex')}`;
    const base = 1_767_100_000_000;
    for (const [n, ts] of [
      [1, base + 1000],
      [2, base + 2000],
      [3, base + 3000],
    ]) {
      expect((await sendZoomEvent(t.baseUrl, joined(uuid, n, ts))).status).toBe(200);
    }
    await waitFor(() => receiver.requests(route.path).length === 3, { what: '3 deliveries' });
    expect((await sendZoomEvent(t.baseUrl, joined(uuid, 4, base + 1500))).status).toBe(200);
    await waitFor(() => receiver.requests(route.path).length === 4, { what: 'the late one' });

    const arrivals = arrivalsOf(receiver.requests(route.path));
    expect(arrivals.map((a) => [a.ts - base, a.request.headers[ORDERING_HEADER] ?? null])).toEqual([
      [1000, null],
      [2000, null],
      [3000, null],
      [1500, 'late'],
    ]);

    // Replay sends the four again, as one meeting: oldest event first, none late now.
    const token = await t.token();
    const replay = await request(t.baseUrl, 'POST', `/api/webhooks/${webhook.id}/replay`, {
      token,
      body: { since, status: 'succeeded' },
    });
    expect(replay.status).toBeLessThan(300);
    await waitFor(() => receiver.requests(route.path).length === 8, { what: 'the replay' });
    const replayed = arrivalsOf(receiver.requests(route.path)).slice(4);
    expect(replayed.map((a) => [a.ts - base, a.request.headers[ORDERING_HEADER] ?? null])).toEqual([
      [1000, null],
      [1500, null],
      [2000, null],
      [3000, null],
    ]);
    expect(overlaps(replayed)).toBe(0);
  }, 60000);
});

describe('ordered delivery per meeting across worker processes and a SIGKILL', () => {
  let t: TestApp;
  let receiver: Receiver;
  const workers: SpawnedApp[] = [];

  const workerEnv = { DELIVERY_CONCURRENCY: '8', DELIVERY_TIMEOUT_MS: '1000', ...ENV };

  beforeAll(async () => {
    // The API alone: what it stores goes to the workers through the queue.
    t = await startTestApp({ env: { APP_ROLE: 'api', ...ENV } });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const worker of workers) worker.child.kill('SIGKILL');
    await receiver.close();
    await t.close();
  });

  it('keeps each meeting in order and one at a time across two workers and a SIGKILL of one', async () => {
    const meetings = 10;
    const events = interleaved(meetings, EVENTS, seeded(15));
    const route = receiver.route({ delaysMs: [20], respond: flaky(3) }, 'killed');
    await createWebhook(t, { url: route.url, events: ['follower.gained'], ordering: 'meeting' });
    const posted = postAll(t.baseUrl, events);

    const distinctSuccesses = () =>
      new Set(
        arrivalsOf(receiver.requests(route.path))
          .filter((a) => a.request.status === 200)
          .map((a) => a.delivery),
      ).size;
    const first = await startWorker(t, { env: workerEnv, workers });
    const second = await startWorker(t, { env: workerEnv, workers });
    await waitFor(() => distinctSuccesses() >= 30, {
      timeoutMs: 60000,
      what: '30 deliveries to succeed',
    });
    first.child.kill('SIGKILL');
    await first.exit;
    await posted;
    await waitFor(() => distinctSuccesses() === meetings * EVENTS, {
      timeoutMs: 120000,
      what: 'every delivery to succeed after the SIGKILL',
    });
    expect(second.child.exitCode).toBeNull();

    const all = byMeeting(arrivalsOf(receiver.requests(route.path)));
    expect(all.size).toBe(meetings);
    for (const [uuid, arrivals] of all) {
      const ts = firstSuccesses(arrivals);
      expect({ uuid, count: ts.length, ordered: isIncreasing(ts) }).toEqual({
        uuid,
        count: EVENTS,
        ordered: true,
      });
      expect({ uuid, overlaps: overlaps(arrivals) }).toEqual({ uuid, overlaps: 0 });
    }
    // Nothing is pending any more: the order held nothing back for good.
    const [{ pending }] = await t.app
      .get(DataSource)
      .query(`SELECT count(*)::int AS pending FROM deliveries WHERE status = 'pending'`);
    expect(pending).toBe(0);
  }, 480000);
});
