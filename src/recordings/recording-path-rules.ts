import { MEETING_UUID_PARAM, USER_ID_PARAM } from '../meetings/meeting-path-rules';
import { PathRules } from '../platform-api/path-rules';

/**
 * The path rules of the Cloud Recording operations, which this module mounts and whose meeting
 * recordings the platform client reads (downloads, the recording automation). A recording is
 * asked for by its meeting's number or by the UUID of one meeting instance, so both meeting
 * parameters take the meetings rule for UUIDs; a user is named as meetings name one.
 * `recordingId` and every other parameter are encoded once by the engine.
 */
export const RECORDING_PATH_RULES: PathRules = {
  userId: USER_ID_PARAM,
  meetingId: MEETING_UUID_PARAM,
  meetingUUID: MEETING_UUID_PARAM,
};
