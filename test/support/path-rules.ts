import { PathRules } from '../../src/platform-api/path-rules';
import { PlatformOperation, platformOperation } from '../../src/platform-api/platform-operations';
import { buildZoomPath } from '../../src/zoom/zoom-operations';

/**
 * The path parameters of `operations` that the platform's document says take a meeting's or
 * webinar's UUID (by name, or "universally unique ID", "meeting UUID" in the description): the
 * specs check that the mounting module encodes each of them as the meetings rule says.
 */
export function meetingUuidParams(
  operations: readonly PlatformOperation[],
): { op: string; name: string }[] {
  return operations.flatMap((op) =>
    op.parameters
      .filter(
        (p) =>
          p.in === 'path' &&
          (/UUID$/i.test(p.name) ||
            /universally unique|meeting UUID|webinar UUID/i.test(p.description ?? '')),
      )
      .map((p) => ({ op: op.id, name: p.name })),
  );
}

/** The platform path the client would call for operation `id`, under a module's rules. */
export const platformPathUnder =
  (rules: PathRules) =>
  (id: string, params: Record<string, string>): string =>
    buildZoomPath(platformOperation(id), params, '', rules);
