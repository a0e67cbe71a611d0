import { randomBytes } from 'node:crypto';
import { SAMPLE_EVENTS, SampleBody, sampleEvent } from '../../src/inbound/sample-events';

/** The sample-event corpus (src/inbound/sample-events), by event name. */
export const ZOOM_FIXTURES = SAMPLE_EVENTS;

export type FixtureBody = SampleBody;

/** A fresh meeting uuid, as the platform makes them (base64, with `/` or `+` at times). */
export const freshUuid = (): string => randomBytes(16).toString('base64');

/** A deep copy of the sample of `event` for the meeting `uuid` (see sampleEvent). */
export const fixtureEvent = (event: string, uuid: string): FixtureBody => sampleEvent(event, uuid);

/** The participant or registrant object of a body, to change it in place. */
export const partOf = (body: FixtureBody, part: 'participant' | 'registrant') =>
  body.payload.object[part] as Record<string, unknown>;

/**
 * The meeting a notification's `data` carries for a sample event of the meeting `uuid`
 * (docs/api.md#event-kinds), written out rather than derived from the samples, so that a
 * change to either the samples or the mapping shows here. `type` 8 is a meeting, 5 a webinar.
 */
export const expectedMeeting = (uuid: string, { id = '85746065432', type = 8 } = {}) => ({
  id,
  uuid,
  topic: 'Bridge test',
  host_id: 'x1yCzABCDEfg23HiJKl4mN',
  type,
  duration: 30,
  timezone: 'Europe/Berlin',
  start_time: '2025-01-01T10:00:05Z',
});
