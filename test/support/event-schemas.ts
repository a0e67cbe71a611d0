import Ajv2020, { ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export interface CatalogEntry {
  name: string;
  schema: object;
}

/**
 * A checker of delivered bodies against an event catalog (GET /api/event-types): each body is
 * validated with the schema of its `event` (`zoom.<name>` with the `zoom.*` entry), by Ajv
 * (draft 2020-12, unknown keywords refused) with formats (uuid, date-time, uri) enforced. Returns the problems,
 * empty when the body is valid.
 */
export function catalogChecker(entries: CatalogEntry[]): (body: Buffer | string) => string[] {
  const ajv = new Ajv2020({ allErrors: true, allowUnionTypes: true });
  addFormats(ajv);
  const validators = new Map<string, ValidateFunction>(
    entries.map((entry) => [entry.name, ajv.compile(entry.schema)]),
  );
  return (raw) => {
    const body = JSON.parse(raw.toString()) as { event?: unknown };
    const name = String(body.event);
    const validate =
      validators.get(name) ?? (name.startsWith('zoom.') ? validators.get('zoom.*') : undefined);
    if (!validate) return [`no catalog entry for event ${JSON.stringify(body.event)}`];
    if (validate(body)) return [];
    return (validate.errors ?? []).map(
      (e) => `${name}: ${e.instancePath || '(body)'} ${e.message} ${JSON.stringify(e.params)}`,
    );
  };
}
