/**
 * Where the platform's published document (src/platform-api/operations.json) is wrong: a
 * schema that contradicts itself or the platform's examples. Each is worked around by the
 * service or excused by the contract tester (test/api-contract.e2e-spec.ts), by name; every
 * name is a heading of docs/api.md's "The platform's spec errors we work around", which says why.
 */
export interface PlatformSpecError {
  /** The name the docs give it. */
  name: string;
  /** Why it is the document's error, not the service's. */
  why: string;
  /** The operations it touches (their operationId), or every operation. */
  operations: readonly string[] | 'all';
  /**
   * A contract failure it excuses (none: the service works around it, nothing to excuse).
   * Matched against the failure's text: the operation, the problem, the request and the answer.
   */
  excuses?: RegExp;
}

export const PLATFORM_SPEC_ERRORS: readonly PlatformSpecError[] = [
  {
    name: 'Alternatives that overlap',
    why:
      'Many schemas offer `oneOf` alternatives that one value fits both of (a user id and an ' +
      'e-mail address are both strings; an id is an integer or a string): by `oneOf` such a ' +
      'value would be refused. The service, its document and the fake platform read `oneOf` as `anyOf`.',
    operations: 'all',
  },
  {
    name: 'Enums their own type cannot hold',
    why:
      'Fields typed `string` list numbers in their `enum` (and the platform’s examples write ' +
      "them as text, `'1'`): no value fits both. The enum is not enforced on requests, and on " +
      'answers a value of the type or of the enum is taken.',
    operations: 'all',
  },
  {
    name: 'Path ids typed as integers that take UUIDs',
    why:
      'Meeting and webinar ids in paths are typed `integer`, yet the same operations take a ' +
      'meeting or webinar instance’s UUID there, as the platform’s own descriptions say. The ' +
      'service documents and takes digits or a UUID; the fake platform takes both as the platform does.',
    operations: 'all',
  },
  {
    name: 'Uploads marked optional whose schema requires the file',
    why:
      'The webinar wallpaper and virtual background uploads have `requestBody.required: false` ' +
      'while their schema requires the `file` part: an upload without a file uploads nothing. ' +
      'The service reads the schema (the body is required, 400 without it) and its document says so.',
    operations: ['uploadWebinarBrandingWallpaper', 'uploadWebinarBrandingVB'],
  },
];

/** The spec error that excuses `failure` of operation `operationId`, if one does. */
export function excusedBy(operationId: string, failure: string): PlatformSpecError | undefined {
  return PLATFORM_SPEC_ERRORS.find(
    (e) =>
      e.excuses !== undefined &&
      (e.operations === 'all' || e.operations.includes(operationId)) &&
      e.excuses.test(failure),
  );
}
