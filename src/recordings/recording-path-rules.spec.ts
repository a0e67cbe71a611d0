import { meetingUuidParams, platformPathUnder } from '../../test/support/path-rules';
import { encodeMeetingUuid } from '../meetings/meeting-path-rules';
import { PLATFORM_OPERATIONS } from '../platform-api/platform-operations';
import { RECORDING_PATH_RULES } from './recording-path-rules';

describe('the recording path rules, as the engine and the client apply them', () => {
  const path = platformPathUnder(RECORDING_PATH_RULES);
  const uuid = 'ab//Xp112QmuoKj48548==';
  const [once, twice] = [encodeURIComponent(uuid), encodeURIComponent(encodeURIComponent(uuid))];

  it("encodes a recording path's meeting UUID twice", () => {
    expect(path('recordingGet', { meetingId: uuid })).toBe(`/meetings/${twice}/recordings`);
    expect(path('recordingStatusUpdate', { meetingUUID: uuid })).toBe(
      `/meetings/${twice}/recordings/status`,
    );
  });

  it('encodes a recording id once, beside the meeting UUID', () => {
    expect(path('recordingDeleteOne', { meetingId: uuid, recordingId: uuid })).toBe(
      `/meetings/${twice}/recordings/${once}`,
    );
  });

  it('refuses `me` as the user whose recordings are listed, as the meetings rule does', () => {
    expect(RECORDING_PATH_RULES.userId?.problem?.('userId', 'me')).toContain('account-level');
  });

  it("gives every parameter the platform documents as a meeting's UUID the meetings rule", () => {
    const params = meetingUuidParams(
      PLATFORM_OPERATIONS.filter((op) => op.group === 'Cloud Recording'),
    );
    expect(params.map((p) => p.name).sort()).toEqual(expect.arrayContaining(['meetingUUID']));
    expect(
      params.filter((p) => RECORDING_PATH_RULES[p.name]?.encode !== encodeMeetingUuid),
    ).toEqual([]);
  });
});
