import { randomBytes } from 'node:crypto';
import type { ZoomEventFixture } from '../fixtures/zoom-events/fixture';
import endpointUrlValidation from '../fixtures/zoom-events/endpoint.url_validation';
import meetingCreated from '../fixtures/zoom-events/meeting.created';
import meetingEnded from '../fixtures/zoom-events/meeting.ended';
import participantJoined from '../fixtures/zoom-events/meeting.participant_joined';
import participantLeft from '../fixtures/zoom-events/meeting.participant_left';
import registrationApproved from '../fixtures/zoom-events/meeting.registration_approved';
import registrationCancelled from '../fixtures/zoom-events/meeting.registration_cancelled';
import registrationCreated from '../fixtures/zoom-events/meeting.registration_created';
import registrationDenied from '../fixtures/zoom-events/meeting.registration_denied';
import meetingStarted from '../fixtures/zoom-events/meeting.started';
import recordingCompleted from '../fixtures/zoom-events/recording.completed';
import recordingTrashed from '../fixtures/zoom-events/recording.trashed';

/** Every fixture of test/fixtures/zoom-events, by its event name. */
export const ZOOM_FIXTURES = {
  'endpoint.url_validation': endpointUrlValidation,
  'meeting.created': meetingCreated,
  'meeting.started': meetingStarted,
  'meeting.ended': meetingEnded,
  'meeting.participant_joined': participantJoined,
  'meeting.participant_left': participantLeft,
  'meeting.registration_created': registrationCreated,
  'meeting.registration_approved': registrationApproved,
  'meeting.registration_denied': registrationDenied,
  'meeting.registration_cancelled': registrationCancelled,
  'recording.completed': recordingCompleted,
  'recording.trashed': recordingTrashed,
} satisfies Record<string, ZoomEventFixture>;

export type FixtureBody = ZoomEventFixture['body'];

/** A fresh meeting uuid, as the platform makes them (base64, with `/` or `+` at times). */
export const freshUuid = (): string => randomBytes(16).toString('base64');

/**
 * A deep copy of a fixture's body for the meeting `uuid` (recording files name it too), as
 * `event` (a webinar.* name takes the meeting.* fixture of the same suffix, with type 5).
 */
export function fixtureEvent(event: string, uuid: string): FixtureBody {
  const webinar = event.startsWith('webinar.');
  const name = webinar ? event.replace(/^webinar\./, 'meeting.') : event;
  const fixture = (ZOOM_FIXTURES as Record<string, ZoomEventFixture>)[name];
  if (!fixture) throw new Error(`no fixture for ${event} in test/fixtures/zoom-events`);
  const body = structuredClone(fixture.body);
  body.event = event;
  const object = body.payload.object;
  if (object) {
    object.uuid = uuid;
    if (webinar) object.type = 5;
    const files = object.recording_files as Record<string, unknown>[] | undefined;
    files?.forEach((file) => (file.meeting_id = uuid));
  }
  return body;
}

/** The participant or registrant object of a body, to change it in place. */
export const partOf = (body: FixtureBody, part: 'participant' | 'registrant') =>
  body.payload.object[part] as Record<string, unknown>;
