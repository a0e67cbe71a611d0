import { buildZoomPath, queryWithout } from './zoom-operations';

describe('buildZoomPath', () => {
  const createMeeting = { method: 'POST', path: '/users/{userId}/meetings' } as const;
  const recordings = { method: 'GET', path: '/meetings/{meetingId}/recordings' } as const;

  it('fills path parameters, each encoded once', () => {
    expect(buildZoomPath(createMeeting, { userId: 'a+b@example.com' })).toBe(
      '/users/a%2Bb%40example.com/meetings',
    );
    expect(buildZoomPath(recordings, { meetingId: '/x==' })).toBe(
      '/meetings/%2Fx%3D%3D/recordings',
    );
  });

  it("encodes a parameter as its owner's rule says, and only that parameter", () => {
    const twice = {
      meetingId: { encode: (v: string) => encodeURIComponent(encodeURIComponent(v)) },
    };
    expect(buildZoomPath(recordings, { meetingId: '/x==' }, '', twice)).toBe(
      '/meetings/%252Fx%253D%253D/recordings',
    );
    expect(buildZoomPath(createMeeting, { userId: '/x==' }, '', twice)).toBe(
      '/users/%2Fx%3D%3D/meetings',
    );
  });

  it('never lets a parameter add a path segment or a query', () => {
    expect(buildZoomPath(createMeeting, { userId: '../admin?x=1#y' })).toBe(
      '/users/..%2Fadmin%3Fx%3D1%23y/meetings',
    );
    for (const raw of ['a/b', 'a?b', 'a#b']) {
      expect(() =>
        buildZoomPath(createMeeting, { userId: raw }, '', { userId: { encode: (v) => v } }),
      ).toThrow('userId would leave its segment');
    }
  });

  it('never puts "." or ".." in a path, however the owner encodes it', () => {
    const twice = {
      meetingId: { encode: (v: string) => encodeURIComponent(encodeURIComponent(v)) },
    };
    for (const uuid of ['.', '..']) {
      expect(() => buildZoomPath(recordings, { meetingId: uuid })).toThrow(
        'meetingId would leave its segment',
      );
      expect(() => buildZoomPath(recordings, { meetingId: uuid }, '', twice)).toThrow(
        'meetingId would leave its segment',
      );
    }
    expect(buildZoomPath(recordings, { meetingId: '...' })).toBe('/meetings/.../recordings');
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
