/**
 * Writes src/platform-api/operations.json, the route table of the platform passthrough (docs/api.md#platform-passthrough),
 * from the platform's published OpenAPI document: every operation of the Meetings, Webinars,
 * Users, Cloud Recording and Reports groups, with its parameters, request-body schema and
 * success answers (status, content type and schema, which /docs-json documents as they are).
 * Prose (descriptions, examples, enum descriptions) is dropped, except each operation's summary
 * and each parameter's first sentence, which Swagger shows; the schemas themselves are kept as
 * published; the service applies its leniencies when it compiles them (src/platform-api).
 *
 * It also writes test/support/report-operations.json: the Dashboards operations reconciliation
 * reads (docs/reconciliation.md), in the same shape, which the contract of the platform's report
 * fake (test/report-fake-contract.e2e-spec.ts) holds that fake to; the service serves none.
 *
 *   npx ts-node --transpile-only scripts/extract-platform-operations.ts <ZoomMeetingAPISpec.json>
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { format, resolveConfig } from 'prettier';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** The spec's group (its first tag) and the scope domain each group maps to. */
const GROUPS: Record<string, string> = {
  Meetings: 'meetings',
  Webinars: 'webinars',
  Users: 'users',
  'Cloud Recording': 'recordings',
  Reports: 'reports',
};

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

/** The dashboard reports reconciliation reads (src/inbound/sources/reconciliation/platform-reports.ts). */
const REPORT_OPERATIONS = [
  'dashboardMeetings',
  'dashboardWebinars',
  'dashboardMeetingParticipants',
  'dashboardWebinarParticipants',
];

/** Schema keywords that only document; everything else (validation, structure) is kept. */
const PROSE = new Set(['description', 'example', 'examples', 'x-enum-descriptions', 'title']);

interface Parameter {
  $ref?: string;
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: Json;
}

interface Operation {
  tags?: string[];
  operationId: string;
  summary?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: Json }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: Json }> }>;
}

interface OpenApi {
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components?: { parameters?: Record<string, Parameter> };
}

/** A schema with its prose removed. Property *names* such as `description` are kept. */
function stripSchema(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(stripSchema);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (PROSE.has(key)) continue;
    if (key === 'properties' && value !== null && typeof value === 'object') {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, stripSchema(sub)]),
      );
    } else {
      out[key] = stripSchema(value);
    }
  }
  return out;
}

/** The first sentence of a description, without markdown links. */
function firstSentence(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const plain = text
    .replace(/\[([^\]]+)\]\([^)]*\)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
  const end = plain.search(/\.(\s|$)/);
  return end < 0 ? plain : plain.slice(0, end + 1);
}

/**
 * A documented success answer: its first sentence, and its content type and schema when it has a
 * body. A 204 has none, whatever the document lists under it (HTTP forbids a 204 body).
 */
function successAnswer(
  where: string,
  status: string,
  response: NonNullable<Operation['responses']>[string],
): JsonObject {
  const description = firstSentence(response.description) ?? '';
  const types = Object.keys(response.content ?? {});
  if (status === '204' || types.length === 0) return { description };
  if (types.length > 1) throw new Error(`${where}: several answer types`);
  const schema = response.content?.[types[0]]?.schema;
  return {
    description,
    contentType: types[0],
    ...(schema ? { schema: stripSchema(schema) } : {}),
  };
}

async function main(): Promise<void> {
  const source = process.argv[2];
  if (!source) {
    console.error('usage: extract-platform-operations.ts <path to ZoomMeetingAPISpec.json>');
    process.exit(2);
  }
  const raw = readFileSync(source);
  const spec = JSON.parse(raw.toString('utf8')) as OpenApi;
  const resolve = (p: Parameter): Parameter =>
    p.$ref ? (spec.components?.parameters?.[p.$ref.split('/').pop() ?? ''] as Parameter) : p;

  const operations: JsonObject[] = [];
  const reports: JsonObject[] = [];
  for (const [path, item] of Object.entries(spec.paths)) {
    for (const method of METHODS) {
      const op = item[method];
      const group = op?.tags?.[0];
      const report = !!op && REPORT_OPERATIONS.includes(op.operationId);
      if (!op || !group || !(group in GROUPS || report)) continue;
      const parameters = (op.parameters ?? []).map(resolve).map((p) => ({
        name: p.name,
        in: p.in,
        required: p.in === 'path' || p.required === true,
        ...(firstSentence(p.description) ? { description: firstSentence(p.description) } : {}),
        schema: stripSchema(p.schema ?? {}),
      }));
      const contentTypes = Object.keys(op.requestBody?.content ?? {});
      if (contentTypes.length > 1) throw new Error(`${method} ${path}: several body types`);
      const body = op.requestBody
        ? {
            contentType: contentTypes[0],
            required: op.requestBody.required === true,
            schema: stripSchema(op.requestBody.content[contentTypes[0]].schema ?? {}),
          }
        : undefined;
      (report ? reports : operations).push({
        id: op.operationId,
        group,
        domain: GROUPS[group] ?? 'reports',
        method: method.toUpperCase(),
        path,
        summary: op.summary ?? op.operationId,
        parameters,
        ...(body ? { body } : {}),
        responses: Object.fromEntries(
          Object.entries(op.responses ?? {})
            .filter(([status]) => /^2\d\d$/.test(status))
            .map(([status, r]) => [
              status,
              successAnswer(`${method} ${path} ${status}`, status, r),
            ]),
        ),
      } as JsonObject);
    }
  }
  const document = {
    source: basename(source),
    sha256: createHash('sha256').update(raw).digest('hex'),
    title: spec.info.title,
    version: spec.info.version,
  };
  const root = join(__dirname, '..');
  await write(join(root, 'src', 'platform-api', 'operations.json'), {
    ...document,
    groups: GROUPS,
    operations,
  });
  await write(join(root, 'test', 'support', 'report-operations.json'), {
    ...document,
    operations: reports,
  });
}

async function write(
  target: string,
  table: JsonObject & { operations: JsonObject[] },
): Promise<void> {
  table.operations.sort((a, b) =>
    `${String(a.path)} ${String(a.method)}`.localeCompare(`${String(b.path)} ${String(b.method)}`),
  );
  // Formatted as `prettier --check` wants it, so regenerating never leaves a formatting diff.
  writeFileSync(
    target,
    await format(JSON.stringify(table), { ...(await resolveConfig(target)), filepath: target }),
  );
  console.log(`${table.operations.length} operations written to ${target}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
