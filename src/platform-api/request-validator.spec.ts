import { ApiError } from '../common/api-error';
import { PathRules } from './path-rules';
import { PLATFORM_OPERATIONS, platformOperation } from './platform-operations';
import { PlatformRequestValidator } from './request-validator';

/** One validator for the file (as the service has one per process), compiling as it is asked. */
const validator = new PlatformRequestValidator();

it('compiles the validators of every operation in the platform document', () => {
  // Compiled on first use in the service: this is where a schema that does not compile shows.
  expect(new PlatformRequestValidator().compileAll()).toBe(PLATFORM_OPERATIONS.length);
});

function detailsOf(
  id: string,
  params: Record<string, string>,
  query = '',
  body?: unknown,
  pathRules: PathRules = {},
): { field: string; message: string }[] {
  try {
    validator.validate(
      platformOperation(id),
      { params, query: new URLSearchParams(query), body },
      pathRules,
    );
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ApiError);
    return (error as ApiError).extra.details ?? [];
  }
}

const fields = (details: { field: string }[]) => details.map((d) => d.field).sort();

describe('PlatformRequestValidator', () => {
  describe('path parameters', () => {
    const noX: PathRules = {
      userId: { problem: (name, v) => (v === 'x' ? `${name} is x` : null) },
    };

    it("applies the mounting module's rule to its parameter, and only to it", () => {
      expect(detailsOf('meetings', { userId: 'x' }, '', undefined, noX)).toEqual([
        { field: 'userId', message: 'userId is x' },
      ]);
      expect(detailsOf('meetings', { userId: 'y' }, '', undefined, noX)).toEqual([]);
      expect(detailsOf('meetings', { userId: 'x' })).toEqual([]);
      expect(detailsOf('meeting', { meetingId: 'x' }, '', undefined, noX)).toEqual([]);
    });

    it.each(['.', '..', '', '../x', 'a/../b'])('refuses the path value %j', (meetingId) => {
      expect(detailsOf('pastMeetingDetails', { meetingId })).toEqual([
        { field: 'meetingId', message: 'meetingId must not be empty, "." or ".."' },
      ]);
    });

    it("names a value once, the engine's refusal before the module's rule", () => {
      const refuseAll: PathRules = { userId: { problem: (name) => `${name} is refused` } };
      expect(detailsOf('user', { userId: '..' }, '', undefined, refuseAll)).toEqual([
        { field: 'userId', message: 'userId must not be empty, "." or ".."' },
      ]);
    });

    it('accepts a UUID where the document types the id as an integer', () => {
      expect(detailsOf('meeting', { meetingId: '/ajXp112QmuoKj4854875==' })).toEqual([]);
      expect(detailsOf('meeting', { meetingId: '85746065432' })).toEqual([]);
    });
  });

  describe('query parameters', () => {
    it('converts text to the documented type before checking it', () => {
      expect(detailsOf('users', {}, 'page_size=300&status=pending')).toEqual([]);
      expect(detailsOf('users', {}, 'page_size=301&status=gone')).toEqual([
        { field: 'status', message: 'status must be one of active, inactive, pending' },
        { field: 'page_size', message: 'page_size must not be greater than 300' },
      ]);
      expect(detailsOf('meetingDelete', { meetingId: '1' }, 'schedule_for_reminder=yes')).toEqual([
        {
          field: 'schedule_for_reminder',
          message: 'schedule_for_reminder must be a boolean (true or false)',
        },
      ]);
    });

    it('ignores undocumented parameters, repeated or not, and the caller-handled ones', () => {
      expect(detailsOf('users', {}, 'new_filter=1&new_filter=2')).toEqual([]);
      expect(
        new PlatformRequestValidator([platformOperation('recordingGet')]).validate(
          platformOperation('recordingGet'),
          { params: { meetingId: '1' }, query: new URLSearchParams('file_type=MP4&file_type=M4A') },
          {},
          ['file_type'],
        ),
      ).toBeUndefined();
    });

    it('wants a documented one given once, and a required one given', () => {
      expect(detailsOf('users', {}, 'page_size=1&page_size=2')).toEqual([
        { field: 'page_size', message: 'page_size must be given once' },
      ]);
      expect(detailsOf('reportDaily', {}, 'year=2025')).toEqual([]);
      expect(fields(detailsOf('reportUsers', {}, 'from=2025-01-01'))).toEqual(['to']);
    });

    it('does not enforce an enum its own type cannot hold', () => {
      expect(detailsOf('reportTelephone', {}, 'type=2&from=2025-01-01&to=2025-01-02')).toEqual([]);
    });
  });

  describe('JSON bodies', () => {
    const create = (body: unknown) => detailsOf('meetingCreate', { userId: 'u1' }, '', body);

    it('accepts every documented field and anything undocumented', () => {
      expect(
        create({
          topic: 'x',
          agenda: 'y',
          timezone: 'Europe/Paris',
          start_time: '2025-01-31T14:00:00',
          settings: { host_video: true, auto_recording: 'cloud', brand_new: { a: 1 } },
          brand_new_field: [1],
        }),
      ).toEqual([]);
    });

    it('names each bad field by its path', () => {
      expect(
        create({
          type: 4,
          settings: { host_video: 'yes' },
          tracking_fields: [{ value: 'x' }],
          recurrence: { monthly_day: 'first' },
        }),
      ).toEqual(
        expect.arrayContaining([
          { field: 'type', message: 'type must be one of 1, 2, 3, 8' },
          {
            field: 'settings.host_video',
            message: 'settings.host_video must be a boolean (true or false)',
          },
          { field: 'tracking_fields[0].field', message: 'tracking_fields[0].field is required' },
          { field: 'recurrence.monthly_day', message: 'recurrence.monthly_day must be an integer' },
        ]),
      );
    });

    it('answers a body breaking a rule per item, 200,000 of them, with the first hundred named', () => {
      // Spread into push(), these details overflowed the call stack: a 500 instead of a 400.
      const details = create({ tracking_fields: Array.from({ length: 200_000 }, () => 1) });
      expect(details).toHaveLength(100);
      expect(details[0].field).toBe('tracking_fields[0]');
    });

    it('wants timezone beside a local start_time on create, not on update', () => {
      expect(create({ start_time: '2025-01-31T14:00:00' })).toEqual([
        { field: 'timezone', message: 'timezone is required when start_time is a local time' },
      ]);
      expect(create({ start_time: '2025-01-31T14:00:00Z' })).toEqual([]);
      expect(
        detailsOf('meetingUpdate', { meetingId: '1' }, '', { start_time: '2025-01-31T14:00:00' }),
      ).toEqual([]);
    });

    it('wants a required body, and an object', () => {
      expect(detailsOf('userCreate', {}, '', undefined)).toEqual([
        { field: 'body', message: 'body is required (application/json)' },
      ]);
      expect(create([1])).toEqual([{ field: 'body', message: 'body must be an object' }]);
    });

    it("reads a path id's oneOf as anyOf: a number or any other text", () => {
      expect(detailsOf('pastMeetingDetails', { meetingId: '85746065432' })).toEqual([]);
      expect(detailsOf('pastMeetingDetails', { meetingId: '4444AAAiAAAAAiAiAiiAii==' })).toEqual(
        [],
      );
    });
  });

  describe('multipart bodies', () => {
    const upload = (parts: Record<string, string>) =>
      detailsOf('userPicture', { userId: 'u1' }, '', parts);

    it('wants a part for each required field', () => {
      expect(upload({ pic_file: 'a.png' })).toEqual([]);
      expect(upload({ other: 'x' })).toEqual([
        { field: 'pic_file', message: 'pic_file is required (a multipart/form-data part)' },
      ]);
    });

    it('wants the file of an upload its document marks optional but whose schema requires it', () => {
      expect(
        detailsOf('uploadWebinarBrandingWallpaper', { webinarId: '1' }, '', undefined),
      ).toEqual([{ field: 'body', message: 'body is required (multipart/form-data)' }]);
      expect(detailsOf('uploadWebinarBrandingWallpaper', { webinarId: '1' }, '', {})).toEqual([
        { field: 'file', message: 'file is required (a multipart/form-data part)' },
      ]);
    });

    it("checks the other parts' text as query text is checked", () => {
      const upload = (parts: Record<string, string>) =>
        detailsOf('uploadWebinarBrandingVB', { webinarId: '1' }, '', parts);
      expect(upload({ file: 'a.png', default: 'true' })).toEqual([]);
      expect(upload({ file: 'a.png', default: 'maybe' })).toEqual([
        { field: 'default', message: 'default must be a boolean (true or false)' },
      ]);
    });
  });

  describe('formats as JSON Schema defines them', () => {
    const invitees = (email: string) =>
      detailsOf('meetingCreate', { userId: 'u1' }, '', {
        settings: { meeting_invitees: [{ email }] },
      });

    it('takes every RFC 5321 mailbox for `email`: quoted local parts, address literals, one-label domains', () => {
      for (const email of [
        'a@example.com',
        '"a b"@example.com',
        'a@[192.0.2.1]',
        'a@[IPv6:2001:db8::1]',
        'postmaster@localhost',
      ]) {
        expect(invitees(email)).toEqual([]);
      }
      for (const email of ['a', 'a@', '.a@example.com', 'a..b@example.com', 'a@[IPv6:::12345]']) {
        expect(invitees(email)).toEqual([
          {
            field: 'settings.meeting_invitees[0].email',
            message: 'settings.meeting_invitees[0].email must be an e-mail address (RFC 5321)',
          },
        ]);
      }
    });
  });
});
