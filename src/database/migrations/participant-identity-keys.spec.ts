import { participantKeyAsOf1766 } from './1766000100001-participant-identity-keys';

// The keys this migration wrote when it shipped: pinned, so that no later change moves them.
describe('the participant key frozen in migration 1766000100001', () => {
  const joined = (participant: Record<string, unknown>, object: Record<string, unknown> = {}) => ({
    event: 'meeting.participant_joined',
    payload: { object: { uuid: 'u/+=1', id: 85746065432, participant, ...object } },
  });

  it('keys on user_id and the join time in one spelling', () => {
    expect(
      participantKeyAsOf1766(joined({ user_id: 16778240, join_time: '2026-01-01T10:00:00Z' })),
    ).toBe(
      '["meeting.participant_joined","uuid","u/+=1","participant","16778240","joined","2026-01-01T10:00:00.000Z"]',
    );
  });

  it('falls back to participant_uuid, id, then email, and to the join time for a leave without one', () => {
    const left = {
      ...joined({ email: 'a@example.com', join_time: 'x' }),
      event: 'webinar.participant_left',
    };
    expect(participantKeyAsOf1766(left)).toBe(
      '["webinar.participant_left","uuid","u/+=1","participant","a@example.com","joined","x"]',
    );
    expect(participantKeyAsOf1766(joined({ participant_uuid: 'P', id: 'I' }))).toContain('"P"');
  });

  it('uses the id without a uuid, and leaves a row with neither alone', () => {
    expect(participantKeyAsOf1766(joined({ user_id: '1' }, { uuid: undefined }))).toContain(
      '"id","85746065432"',
    );
    expect(participantKeyAsOf1766(joined({}, { uuid: null, id: null }))).toBeNull();
  });

  it('hashes a key too long for a btree entry', () => {
    expect(participantKeyAsOf1766(joined({ user_id: 'x'.repeat(600) }))).toMatch(
      /^sha256:[0-9a-f]{64}$/,
    );
  });
});
