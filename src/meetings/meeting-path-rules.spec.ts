import { encodePathParam, userIdProblem } from './meeting-path-rules';

describe('encodePathParam', () => {
  it.each([
    ['85746065432', '85746065432'],
    ['4444AAAiAAAAAiAiAiiAii==', '4444AAAiAAAAAiAiAiiAii%3D%3D'],
    ['ab/cd==', 'ab%2Fcd%3D%3D'],
    ['/ajXp112QmuoKj4854875==', '%252FajXp112QmuoKj4854875%253D%253D'],
    ['ab//cd==', 'ab%252F%252Fcd%253D%253D'],
    ['+/x', '%2B%2Fx'],
  ])('encodes %s as %s', (id, encoded) => {
    expect(encodePathParam(id)).toBe(encoded);
  });

  it('double-encodes exactly the values that begin with / or contain //', () => {
    for (const id of ['/a', 'a//b', '//', 'a/b', 'a/b/c', 'abc']) {
      const double = id.startsWith('/') || id.includes('//');
      const once = encodeURIComponent(id);
      expect(encodePathParam(id)).toBe(double ? encodeURIComponent(once) : once);
      expect(decodeURIComponent(decodeURIComponent(encodePathParam(id)))).toBe(id);
    }
  });
});

describe('userIdProblem', () => {
  it.each(['me', 'ME', 'Me'])('refuses %s, naming the account-level token', (value) => {
    expect(userIdProblem('userId', value)).toContain('account-level token');
  });

  it('accepts an id or an e-mail address, and leaves other parameters alone', () => {
    expect(userIdProblem('userId', 'a+b@example.com')).toBeNull();
    expect(userIdProblem('userId', 'KDcuGIm1QgePTO8WbOqwIQ')).toBeNull();
    expect(userIdProblem('meetingId', 'me')).toBeNull();
  });

  it('refuses a value that would leave its path segment', () => {
    expect(userIdProblem('userId', 'a/b')).toBe('userId must be a user id or an e-mail address');
  });
});
