import {
  meetingUpdated,
  participantJoined,
  registrationCancelled,
  registrationCreated,
} from '../../scripts/platform/zoom-events';
import { TestContext, newTestService } from '../../test/fakes/new-test-service';
import { dedupeKey } from './dedupe-key';
import { InboundEventEntity } from './inbound-event.entity';
import { INBOUND_MAX_RUNS, InboundProcessor } from './inbound.processor';

const UUID = 'proc-uuid==';

describe('InboundProcessor', () => {
  let t: TestContext<InboundProcessor>;

  beforeEach(async () => {
    t = await newTestService(InboundProcessor);
  });

  type Envelope = { event: string; payload: Record<string, unknown> };

  /** Stores a platform event as the endpoint would (under its identity key), unprocessed. */
  const stored = (event: Envelope) =>
    t.tables.addInboundEvent({
      event: event.event,
      identityKey: dedupeKey(event),
      payload: { ...event },
      trackingId: 'rid=1',
    });

  const run = (row: InboundEventEntity) =>
    t.sut.process({ data: { inboundEventId: row.id } } as Parameters<
      InboundProcessor['process']
    >[0]);

  /** Stores a platform event, runs its job, and returns the row. */
  async function processed(event: Envelope) {
    const row = stored(event);
    await run(row);
    return row;
  }

  const published = () => [...t.tables.events.values()].map((e) => e.kind).sort();

  it('publishes a mapped event both mapped and as it is, with the tracking id in source', async () => {
    const row = await processed(participantJoined(UUID, 1));
    expect(published()).toEqual(['follower.gained', 'zoom.meeting.participant_joined']);
    const asIs = [...t.tables.events.values()].find((e) => e.kind.startsWith('zoom.'));
    expect(asIs?.data).toEqual(participantJoined(UUID, 1).payload);
    expect(asIs?.source).toMatchObject({
      event: 'meeting.participant_joined',
      tracking_id: 'rid=1',
    });
    expect(row.processedAt).toBeInstanceOf(Date);
  });

  it('publishes an unmapped event only as it is', async () => {
    const row = await processed(meetingUpdated());
    expect(published()).toEqual(['zoom.meeting.updated']);
    expect(row.processedAt).toBeInstanceOf(Date);
  });

  it('publishes no gain for a pending registration and no loss without a gain', async () => {
    const pending = registrationCreated(UUID, 1);
    (pending.payload.object as { registrant: Record<string, unknown> }).registrant.status =
      'pending';
    await processed(pending);
    await processed(registrationCancelled(UUID, 1));
    expect(published()).toEqual([
      'zoom.meeting.registration_cancelled',
      'zoom.meeting.registration_created',
    ]);
  });

  it('publishes the loss of a gained registrant once, and a second gain never', async () => {
    await processed(registrationCreated(UUID, 1));
    await processed({ ...registrationCreated(UUID, 1), event: 'meeting.registration_approved' });
    await processed(registrationCancelled(UUID, 1));
    await processed({ ...registrationCancelled(UUID, 1), event: 'meeting.registration_denied' });
    expect(published().filter((kind) => !kind.startsWith('zoom.'))).toEqual([
      'follower.gained',
      'follower.lost',
    ]);
  });

  it('holds a cancellation back while the registration it withdraws is not processed yet', async () => {
    const created = stored(registrationCreated(UUID, 2));
    const cancelled = stored(registrationCancelled(UUID, 2));

    await expect(run(cancelled)).rejects.toThrow(/not processed yet; retrying/);
    expect(cancelled.processedAt).toBeNull();

    await run(created);
    await run(cancelled);
    expect(published().filter((kind) => !kind.startsWith('zoom.'))).toEqual([
      'follower.gained',
      'follower.lost',
    ]);
    expect(cancelled.processedAt).toBeInstanceOf(Date);
  });

  it('delivers a payload that is null, a string or an array as it came, counted unmappable', async () => {
    for (const payload of [null, 'text', [1, { a: 2 }]]) {
      const row = stored({ event: 'meeting.started', payload } as unknown as Envelope);
      await run(row);
      expect(row.processedAt).toBeInstanceOf(Date);
      expect(row.processError).toMatch(/cannot be mapped: payload is .*, not an object/);
    }
    const asIs = [...t.tables.events.values()].filter((e) => e.kind === 'zoom.meeting.started');
    expect(asIs.map((e) => e.data)).toEqual([null, 'text', [1, { a: 2 }]]);
    expect(published().filter((kind) => !kind.startsWith('zoom.'))).toEqual([]);
  });

  it(`gives up an event after ${INBOUND_MAX_RUNS} runs: kept, marked, logged and counted`, async () => {
    const row = stored(registrationCancelled(UUID, 3));
    // Its registration stays unprocessed: every run throws, as a poison event's would.
    stored(registrationCreated(UUID, 3));
    for (let i = 0; i < INBOUND_MAX_RUNS; i++) {
      await expect(run(row)).rejects.toThrow(/retrying/);
    }
    expect(row.processedAt).toBeNull();
    await run(row);
    expect(row.processedAt).toBeInstanceOf(Date);
    expect(row.processError).toMatch(`given up after ${INBOUND_MAX_RUNS} runs`);
    expect(t.tables.inboundEvents.get(row.id)).toBe(row);
    const counted = await t.metrics.inboundEventsAbandoned.get();
    expect(counted.values).toEqual([
      { labels: { event: 'meeting.registration_cancelled' }, value: 1 },
    ]);
    // A later run (the sweeper, a stalled job) finds it processed and does nothing; its as-is
    // delivery went out at its first run.
    await run(row);
    expect(published()).toEqual(['zoom.meeting.registration_cancelled']);
  });
});
