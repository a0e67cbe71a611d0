import { meetingUuidParams, platformPathUnder } from '../../test/support/path-rules';
import { PLATFORM_OPERATIONS, platformOperation } from '../platform-api/platform-operations';
import { PlatformRequestValidator } from '../platform-api/request-validator';
import {
  MEETING_PATH_RULES,
  USER_ID_PARAM,
  USER_ID_PATTERN,
  encodeMeetingUuid,
} from './meeting-path-rules';
import { MEETING_GROUPS } from './meetings.module';

describe('encodeMeetingUuid', () => {
  it.each([
    ['85746065432', '85746065432'],
    ['4444AAAiAAAAAiAiAiiAii==', '4444AAAiAAAAAiAiAiiAii%3D%3D'],
    ['ab/cd==', 'ab%2Fcd%3D%3D'],
    ['/ajXp112QmuoKj4854875==', '%252FajXp112QmuoKj4854875%253D%253D'],
    ['ab//cd==', 'ab%252F%252Fcd%253D%253D'],
    ['+/x', '%2B%2Fx'],
  ])('encodes %s as %s', (id, encoded) => {
    expect(encodeMeetingUuid(id)).toBe(encoded);
  });

  it('double-encodes exactly the values that begin with / or contain //', () => {
    for (const id of ['/a', 'a//b', '//', 'a/b', 'a/b/c', 'abc']) {
      const double = id.startsWith('/') || id.includes('//');
      const once = encodeURIComponent(id);
      expect(encodeMeetingUuid(id)).toBe(double ? encodeURIComponent(once) : once);
      expect(decodeURIComponent(decodeURIComponent(encodeMeetingUuid(id)))).toBe(id);
    }
  });
});

describe('the meeting path rules, as the engine and the client apply them', () => {
  const path = platformPathUnder(MEETING_PATH_RULES);
  const uuid = '/ajXp112QmuoKj4854875==';
  const [once, twice] = [encodeURIComponent(uuid), encodeURIComponent(encodeURIComponent(uuid))];

  it('encodes a meeting or webinar UUID twice on a meeting path', () => {
    expect(path('meeting', { meetingId: uuid })).toBe(`/meetings/${twice}`);
    expect(path('pastMeetingDetails', { meetingId: uuid })).toBe(`/past_meetings/${twice}`);
    expect(path('reportMeetingDetails', { meetingId: uuid })).toBe(`/report/meetings/${twice}`);
    expect(path('webinar', { webinarId: uuid })).toBe(`/webinars/${twice}`);
  });

  it('encodes the same value once in any other parameter, beside a meeting UUID too', () => {
    expect(path('meetingRegistrantGet', { meetingId: uuid, registrantId: uuid })).toBe(
      `/meetings/${twice}/registrants/${once}`,
    );
    expect(path('user', { userId: uuid })).toBe(`/users/${once}`);
    expect(path('userAssistantDelete', { userId: 'u1', assistantId: uuid })).toBe(
      `/users/u1/assistants/${once}`,
    );
  });

  it("gives every parameter the platform documents as a meeting's or webinar's UUID the rule", () => {
    const params = meetingUuidParams(
      PLATFORM_OPERATIONS.filter((op) => MEETING_GROUPS.has(op.group)),
    );
    expect(params.length).toBeGreaterThan(0);
    expect(params.filter((p) => MEETING_PATH_RULES[p.name]?.encode !== encodeMeetingUuid)).toEqual(
      [],
    );
  });
});

describe('the userId rule', () => {
  const problem = (value: string) => USER_ID_PARAM.problem?.('userId', value);
  const validator = new PlatformRequestValidator();
  const refused = (userId: string) => {
    try {
      validator.validate(
        platformOperation('user'),
        { params: { userId }, query: new URLSearchParams() },
        MEETING_PATH_RULES,
      );
      return false;
    } catch {
      return true;
    }
  };

  it.each(['me', 'ME', 'Me'])('refuses %s, naming the account-level token', (value) => {
    expect(problem(value)).toContain('account-level token');
  });

  it('accepts an id or an e-mail address', () => {
    expect(problem('a+b@example.com')).toBeNull();
    expect(problem('KDcuGIm1QgePTO8WbOqwIQ')).toBeNull();
  });

  it('refuses a value that would leave its path segment', () => {
    expect(problem('a/b')).toBe('userId must be a user id or an e-mail address');
  });

  it('is not applied to a meeting id', () => {
    expect(MEETING_PATH_RULES.meetingId?.problem).toBeUndefined();
  });

  it.each([
    'me',
    'ME',
    '.',
    '..',
    'a/b',
    'a b',
    'a\u0085b',
    'a\u00a0b',
    'a\tb',
    'a?b',
    'a%2F',
    '',
    'x'.repeat(129),
    'host@example.com',
    'KDcuGIm1QgePTO8WbOqwIQ',
    'meh',
    'x'.repeat(128),
  ])('is stated in the document as the validator applies it: %j', (userId) => {
    // The documented pattern (Swagger, generated clients) and the refusal never disagree.
    expect(new RegExp(USER_ID_PATTERN).test(userId)).toBe(!refused(userId));
  });

  it('spells its white space out: no class escape whose meaning differs between engines', () => {
    expect(USER_ID_PATTERN).not.toMatch(/\\[sSwWdDbB]/);
  });
});
