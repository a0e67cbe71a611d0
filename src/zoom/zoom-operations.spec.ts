import { buildZoomPath, encodePathParam, queryWithout } from './zoom-operations';

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

describe('buildZoomPath', () => {
  const createMeeting = { method: 'POST', path: '/users/{userId}/meetings' } as const;
  const recordings = { method: 'GET', path: '/meetings/{meetingId}/recordings' } as const;

  it('fills and encodes path parameters', () => {
    expect(buildZoomPath(createMeeting, { userId: 'a+b@example.com' })).toBe(
      '/users/a%2Bb%40example.com/meetings',
    );
    expect(buildZoomPath(recordings, { meetingId: '/x==' })).toBe(
      '/meetings/%252Fx%253D%253D/recordings',
    );
  });

  it('never lets a parameter add a path segment or a query', () => {
    expect(buildZoomPath(createMeeting, { userId: '../admin?x=1#y' })).toBe(
      '/users/..%2Fadmin%3Fx%3D1%23y/meetings',
    );
  });

  it('appends the query string as it is', () => {
    expect(buildZoomPath(recordings, { meetingId: '1' }, 'ttl=5&include_fields=a%2Cb')).toBe(
      '/meetings/1/recordings?ttl=5&include_fields=a%2Cb',
    );
  });

  it('refuses a missing path parameter', () => {
    expect(() => buildZoomPath(recordings, {})).toThrow('path parameter meetingId is missing');
  });
});

describe('queryWithout', () => {
  it.each([
    ['file_type=MP4&ttl=5', 'ttl=5'],
    ['ttl=5&file%5Ftype=MP4&file_type=M4A&x=a%20b', 'ttl=5&x=a%20b'],
    ['a=1&a=2&b', 'a=1&a=2&b'],
    ['', ''],
    ['%zz=1&file_type=1', '%zz=1'],
  ])('drops file_type from %s, leaving the rest as written', (raw, expected) => {
    expect(queryWithout(raw, ['file_type'])).toBe(expected);
  });
});
