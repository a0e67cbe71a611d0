import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import jsonata from 'jsonata';
import { Json } from './http';

/**
 * docs/api.md checked by the e2e suite itself: every answer an in-process test app gives is
 * recorded (test/support/test-app.ts), and after each spec file the records are held against
 * the app's own /docs-json (test/support/response-contract.setup.ts). An answer fails when its
 * status is not documented for its route, or when its JSON body breaks the documented schema;
 * the failure names the route, the status and the schema path.
 */

export interface RecordedResponse {
  method: string;
  /** The request target as sent (path and query). */
  url: string;
  status: number;
  contentType: string;
  /** The body's bytes; undefined when it was too large to keep. */
  body: Buffer | undefined;
}

/** Paths served outside the document on purpose: Swagger itself, metrics, dashboards. */
const UNDOCUMENTED = [
  /^\/docs(-json|-yaml|\/|$)/,
  /^\/metrics$/,
  /^\/admin\/queues(\/|$)/,
  /^\/console(\/|$)/,
];

const BODY_LIMIT = 4 * 1024 * 1024;

interface ContractState {
  records: RecordedResponse[];
  document: Json | undefined;
  documentFrom: string | undefined;
}

// One per spec file: Jest gives each file its own module registry, so this starts empty.
const state: ContractState = { records: [], document: undefined, documentFrom: undefined };

/** Records every answer `server` writes, with the first 4 MiB of its body. */
export function recordResponses(server: Server): void {
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    // Taken now: mounted sub-apps (the queue dashboard) rewrite req.url as they route.
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const chunks: Buffer[] = [];
    let size = 0;
    const keep = (chunk: unknown, encoding?: unknown) => {
      if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
      const buffer = Buffer.isBuffer(chunk)
        ? chunk
        : Buffer.from(
            chunk as string,
            typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8',
          );
      size += buffer.length;
      if (size <= BODY_LIMIT) chunks.push(buffer);
    };
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.write = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return write(...args);
    }) as ServerResponse['write'];
    res.end = ((...args: unknown[]) => {
      keep(args[0], args[1]);
      return end(...args);
    }) as ServerResponse['end'];
    res.once('finish', () => {
      state.records.push({
        method,
        url,
        status: res.statusCode,
        contentType: String(res.getHeader('content-type') ?? ''),
        body: size <= BODY_LIMIT ? Buffer.concat(chunks) : undefined,
      });
    });
  });
}

/** Keeps the document the answers are checked against (the first app of the file that serves one). */
export async function rememberDocument(baseUrl: string): Promise<void> {
  if (state.document) return;
  const res = await fetch(`${baseUrl}/docs-json`);
  if (res.status !== 200) return;
  state.document = await res.json();
  state.documentFrom = baseUrl;
}

/** Takes the answers recorded so far, and the document to check them against. */
export function takeRecorded(): { records: RecordedResponse[]; document: Json | undefined } {
  const records = state.records.splice(0);
  return { records, document: state.document };
}

interface Route {
  template: string;
  pattern: RegExp;
  /** Literal segments weigh more: `/users/summary` wins over `/users/{userId}`. */
  literals: number;
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const escape = (text: string) => text.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

function documentedRoutesOf(document: Json): Route[] {
  return Object.keys(document.paths as Record<string, Json>)
    .map((template) => ({
      template,
      pattern: new RegExp(
        `^${template
          .split(/(\{[^}]+\})/)
          .map((part) => (part.startsWith('{') ? '[^/]+' : escape(part)))
          .join('')}$`,
      ),
      literals: template.split('/').filter((s) => s && !s.startsWith('{')).length,
    }))
    .sort((a, b) => b.literals - a.literals);
}

/** An ajv holding `document` as `openapi`: compile `{ $ref: 'openapi#/…' }` for any of its schemas. */
export function documentAjv(document: Json): Ajv {
  // strict off: OpenAPI 3.0 keywords (example, nullable, x-…) sit beside JSON Schema's.
  const ajv = new Ajv({ allErrors: true, strict: false, logger: false });
  addFormats(ajv);
  ajv.addFormat('int64', { type: 'number', validate: Number.isSafeInteger });
  ajv.addFormat('int32', { type: 'number', validate: Number.isInteger });
  ajv.addFormat('jsonata', (text: string) => {
    try {
      jsonata(text);
      return true;
    } catch {
      return false;
    }
  });
  ajv.addSchema(document, 'openapi');
  return ajv;
}

/** The checker of one document: answers in, problems (one readable line each) out. */
export class ResponseContract {
  private readonly ajv: Ajv;
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly document: Json) {
    this.ajv = documentAjv(document);
    this.routes = documentedRoutesOf(document);
  }

  problemsOf(record: RecordedResponse): string[] {
    const path = record.url.split('?')[0];
    const method = record.method === 'HEAD' ? 'get' : record.method.toLowerCase();
    if (UNDOCUMENTED.some((p) => p.test(path))) return [];
    const route = this.routes.find((r) => r.pattern.test(path));
    if (!route) {
      // A path the service does not serve: a 4xx in the error shape is all it may answer.
      if (record.status < 400 || record.status >= 500) {
        return [
          `${record.method} ${path} ${record.status}: no documented path matches, yet the answer is not a 4xx`,
        ];
      }
      return this.bodyProblems(
        `${record.method} (no documented path) ${record.status}`,
        '#/components/schemas/ErrorResponse',
        record,
      );
    }
    const item = this.document.paths[route.template] as Record<string, Json>;
    const operation = item[method];
    const where = `${record.method} ${route.template} ${record.status}`;
    if (!operation) {
      const allowed = HTTP_METHODS.filter((m) => item[m]);
      // Parsers and limits answer before routing (400, 413, 415, 431); routing itself says 405.
      if (record.status === 404 || record.status < 400) {
        return [
          `${where}: method not documented (${allowed.join(', ')} are), expected 405 with Allow`,
        ];
      }
      return this.bodyProblems(where, '#/components/schemas/ErrorResponse', record);
    }
    const responses = operation.responses as Record<string, Json>;
    const key = [String(record.status), `${String(record.status)[0]}XX`, 'default'].find(
      (k) => responses[k] !== undefined,
    );
    if (!key) {
      return [`${where}: status not documented (documented: ${Object.keys(responses).join(', ')})`];
    }
    const content = responses[key].content as Record<string, Json> | undefined;
    const isJson = /^application\/(.+\+)?json\b/.test(record.contentType);
    // Only JSON bodies are held to a schema; a file passed on as the platform typed it (`*/*`,
    // a binary string) is not JSON the service wrote.
    if (!isJson) return [];
    const mediaType = content?.['application/json']
      ? 'application/json'
      : content?.['*/*']
        ? '*/*'
        : undefined;
    const schema = mediaType ? content?.[mediaType]?.schema : undefined;
    if (!schema) {
      if (!record.body || record.body.length === 0) return [];
      return [`${where}: answered JSON, but responses.${key} documents no JSON schema`];
    }
    if (schema.format === 'binary') return [];
    const pointer = `#/paths/${pointerEscape(route.template)}/${method}/responses/${key}/content/${pointerEscape(mediaType as string)}/schema`;
    return this.bodyProblems(where, pointer, record);
  }

  private bodyProblems(where: string, pointer: string, record: RecordedResponse): string[] {
    if (!record.body || record.body.length === 0) return [];
    let body: unknown;
    try {
      body = JSON.parse(record.body.toString('utf8'));
    } catch {
      return [`${where}: content-type ${record.contentType} but the body is not JSON`];
    }
    const validate = this.validatorFor(pointer);
    if (validate(body)) return [];
    return (validate.errors ?? []).map((e) => `${where}: ${describe(e)}`);
  }

  private validatorFor(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (!validate) {
      validate = this.ajv.compile({ $ref: `openapi${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

const pointerEscape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');

/** One line per schema error: where in the body, what, and the schema keyword that refused it. */
function describe(error: ErrorObject): string {
  const params = JSON.stringify(error.params);
  // Array indices vary from answer to answer; the same fault in each item is one problem.
  const at = error.instancePath.replace(/\/\d+(?=\/|$)/g, '/*') || '';
  return `body${at} ${error.message ?? 'is invalid'} ${params} (schema ${decodeURIComponent(error.schemaPath.replace(/^openapi/, ''))})`;
}

/**
 * Every problem of the answers recorded so far (and forgets them), each once with how often it
 * was seen and one answer that showed it.
 */
export function recordedProblems(): string[] {
  const { records, document } = takeRecorded();
  if (records.length === 0 || !document) return [];
  const contract = new ResponseContract(document);
  const seen = new Map<string, { count: number; example: string }>();
  for (const record of records) {
    for (const problem of contract.problemsOf(record)) {
      const entry = seen.get(problem);
      if (entry) entry.count += 1;
      else seen.set(problem, { count: 1, example: `${record.method} ${record.url}` });
    }
  }
  return [...seen].map(([problem, { count, example }]) =>
    count > 1 ? `${problem} — ${count} answers, e.g. ${example}` : `${problem} — ${example}`,
  );
}
