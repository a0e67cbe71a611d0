import { GET_MEETING_RECORDINGS } from '../zoom/zoom.client';
import {
  PLATFORM_OPERATIONS,
  PlatformOperation,
  compareRoutes,
  expressPath,
  platformOperation,
  scopeOf,
} from './platform-operations';

describe('the platform route table', () => {
  it('has 156 operations with unique ids and unique method and path', () => {
    expect(PLATFORM_OPERATIONS).toHaveLength(156);
    expect(new Set(PLATFORM_OPERATIONS.map((op) => op.id)).size).toBe(156);
    expect(new Set(PLATFORM_OPERATIONS.map((op) => `${op.method} ${op.path}`)).size).toBe(156);
  });

  it.each([
    ['meetingCreate', 'meetings:write'],
    ['meeting', 'meetings:read'],
    ['webinarRegistrants', 'webinars:read'],
    ['webinarPanelistCreate', 'webinars:write'],
    ['userStatus', 'users:write'],
    ['recordingDeleteOne', 'recordings:write'],
    ['reportDaily', 'reports:read'],
  ])('%s needs %s', (id, scope) => {
    expect(scopeOf(platformOperation(id))).toBe(scope);
  });

  it('gives reports only read operations', () => {
    expect(
      PLATFORM_OPERATIONS.filter((op) => op.domain === 'reports').map((op) => op.method),
    ).toEqual(expect.not.arrayContaining(['POST', 'PUT', 'PATCH', 'DELETE']));
  });

  it('holds the operation the platform client calls by itself (recording automation)', () => {
    expect(platformOperation('recordingGet')).toMatchObject(GET_MEETING_RECORDINGS);
  });

  it('writes Express routes', () => {
    expect(expressPath({ path: '/meetings/{meetingId}/registrants/{registrantId}' })).toBe(
      '/meetings/:meetingId/registrants/:registrantId',
    );
  });

  it('orders literal segments before parameters in the same place', () => {
    const op = (method: PlatformOperation['method'], path: string) =>
      ({ method, path }) as PlatformOperation;
    const sorted = [
      op('GET', '/users/{userId}'),
      op('GET', '/meetings/{meetingId}/registrants/{registrantId}'),
      op('GET', '/users/summary'),
      op('GET', '/meetings/{meetingId}/registrants/questions'),
      op('GET', '/users/me/zak'),
    ].sort(compareRoutes);
    const paths = sorted.map((o) => o.path);
    expect(paths.indexOf('/users/summary')).toBeLessThan(paths.indexOf('/users/{userId}'));
    expect(paths.indexOf('/meetings/{meetingId}/registrants/questions')).toBeLessThan(
      paths.indexOf('/meetings/{meetingId}/registrants/{registrantId}'),
    );
  });

  it('unknown ids are a programming error', () => {
    expect(() => platformOperation('nope')).toThrow(
      'platform operation nope is not in the route table',
    );
  });
});
