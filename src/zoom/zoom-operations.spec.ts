import { ZOOM_OPERATIONS, buildZoomPath, encodeMeetingId } from './zoom-operations';

describe('encodeMeetingId', () => {
  it.each([
    ['85746065432', '85746065432'],
    ['4444AAAiAAAAAiAiAiiAii==', '4444AAAiAAAAAiAiAiiAii%3D%3D'],
    ['ab/cd==', 'ab%2Fcd%3D%3D'],
    ['/ajXp112QmuoKj4854875==', '%252FajXp112QmuoKj4854875%253D%253D'],
    ['ab//cd==', 'ab%252F%252Fcd%253D%253D'],
    ['+/x', '%2B%2Fx'],
  ])('encodes %s as %s', (id, encoded) => {
    expect(encodeMeetingId(id)).toBe(encoded);
  });

  it('double-encodes exactly the UUIDs that begin with / or contain //', () => {
    for (const id of ['/a', 'a//b', '//', 'a/b', 'a/b/c', 'abc']) {
      const double = id.startsWith('/') || id.includes('//');
      const once = encodeURIComponent(id);
      expect(encodeMeetingId(id)).toBe(double ? encodeURIComponent(once) : once);
      expect(decodeURIComponent(decodeURIComponent(encodeMeetingId(id)))).toBe(id);
    }
  });
});

describe('buildZoomPath', () => {
  it('fills and encodes path parameters', () => {
    expect(buildZoomPath(ZOOM_OPERATIONS.createMeeting, { userId: 'a+b@example.com' })).toBe(
      '/users/a%2Bb%40example.com/meetings',
    );
    expect(buildZoomPath(ZOOM_OPERATIONS.getMeetingRecordings, { meetingId: '/x==' })).toBe(
      '/meetings/%252Fx%253D%253D/recordings',
    );
  });

  it('never lets a parameter add a path segment or a query', () => {
    const path = buildZoomPath(ZOOM_OPERATIONS.listUserMeetings, { userId: '../admin?x=1#y' });
    expect(path).toBe('/users/..%2Fadmin%3Fx%3D1%23y/meetings');
  });

  it('adds the listed query parameters, skipping undefined ones', () => {
    expect(
      buildZoomPath(
        ZOOM_OPERATIONS.listUsers,
        {},
        {
          status: 'active',
          page_size: 30,
          next_page_token: undefined,
        },
      ),
    ).toBe('/users?status=active&page_size=30');
  });

  it('refuses a query parameter the operation does not list', () => {
    expect(() => buildZoomPath(ZOOM_OPERATIONS.getMeeting, { meetingId: '1' }, { x: '1' })).toThrow(
      'GET /meetings/{meetingId}: query parameter x is not listed',
    );
  });

  it('refuses a missing path parameter', () => {
    expect(() => buildZoomPath(ZOOM_OPERATIONS.getMeeting, {})).toThrow(
      'path parameter meetingId is missing',
    );
  });
});
