/** A JSON Schema (draft 2020-12) as plain data. */
export type JsonSchema = { [keyword: string]: unknown };

const SUBSCHEMA_LISTS = ['oneOf', 'anyOf', 'allOf'] as const;
const SUBSCHEMAS = ['items', 'additionalProperties', 'not'] as const;

const isSchema = (value: unknown): value is JsonSchema =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The same schema in OpenAPI 3.0's dialect, which @nestjs/swagger writes: Swagger then shows
 * what GET /api/event-types serves. 3.0 knows no `const`, no type lists, no `null` type and no
 * `examples` list; they become `enum`, `nullable` and `example`.
 */
export function toOpenApi30(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === '$schema' || keyword === '$id') continue;
    if (keyword === 'const') out.enum = [value];
    else if (keyword === 'examples' && Array.isArray(value)) out.example = value[0];
    else if (keyword === 'type' && (Array.isArray(value) || value === 'null')) {
      const types = (Array.isArray(value) ? value : [value]).filter((t) => t !== 'null');
      out.nullable = true;
      if (types.length === 1) out.type = types[0];
      // 3.0 has no null type and wants one beside `nullable` (linters refuse it alone): a
      // value that is always null is a nullable object whose one value is null.
      else if (types.length === 0) Object.assign(out, { type: 'object', enum: [null] });
      else throw new Error(`toOpenApi30: type ${JSON.stringify(value)} has no 3.0 form`);
    } else if (keyword === 'properties' && isSchema(value)) {
      out[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, toOpenApi30(sub as JsonSchema)]),
      );
    } else if ((SUBSCHEMA_LISTS as readonly string[]).includes(keyword) && Array.isArray(value)) {
      out[keyword] = value.map((sub: JsonSchema) => toOpenApi30(sub));
    } else if ((SUBSCHEMAS as readonly string[]).includes(keyword) && isSchema(value)) {
      out[keyword] = toOpenApi30(value);
    } else out[keyword] = value;
  }
  return out;
}
