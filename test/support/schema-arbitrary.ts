import fc from 'fast-check';
import type { Json } from './http';

/**
 * Values for the OpenAPI 3.0 schemas of the service's own document (test/api-contract): valid
 * ones drawn from the keywords the document uses, and invalid ones that break one of them. Kept
 * small on purpose: the contract test holds every valid draw to the document with ajv, so a
 * keyword this misses only makes draws rejected, never a wrong verdict.
 */

/** Date-times are drawn from the last day: replay and reconciliation windows are bounded by today (docs/api.md). */
const DAY_MS = 24 * 60 * 60 * 1000;

const recentTimestamp = (now: number): fc.Arbitrary<string> =>
  fc
    .integer({ min: now - DAY_MS, max: now - 60_000 })
    .map((ms) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z'));

/** RFC 3339 allows an offset as well as `Z`: a third of the date-times carry one. */
const anyTimestamp = (now: number): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 2, arbitrary: recentTimestamp(now) },
    fc.tuple(recentTimestamp(now), fc.integer({ min: -12, max: 14 })).map(([utc, hours]) => {
      const local = new Date(Date.parse(utc) + hours * 3_600_000).toISOString().slice(0, 19);
      const sign = hours < 0 ? '-' : '+';
      return `${local}${sign}${String(Math.abs(hours)).padStart(2, '0')}:00`;
    }),
  );

const LABEL = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,8}[a-z0-9])?$/);

/**
 * RFC 5321 mailboxes (JSON Schema's `email`) in each of the grammar's forms: a dot-string or a
 * quoted local part, a domain or an IPv4 or IPv6 address literal.
 */
const mailbox: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.stringMatching(/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,10}(?:\.[a-z0-9]{1,5})?$/),
      },
      fc.stringMatching(/^"(?:[ !#-[\]-~]|\\[ -~]){0,10}"$/),
    ),
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .tuple(
            fc.array(LABEL, { minLength: 1, maxLength: 2 }),
            fc.constantFrom('com', 'org', 'example'),
          )
          .map(([labels, tld]) => [...labels, tld].join('.')),
      },
      fc.ipV4().map((ip) => `[${ip}]`),
      fc.ipV6().map((ip) => `[IPv6:${ip}]`),
    ),
  )
  .map(([local, domain]) => `${local}@${domain}`);

/** One way to break a value: the keyword, the broken value, and the field it breaks (its path). */
export interface Breakage {
  broken: string;
  value: unknown;
  field?: string[];
}

export class SchemaArbitraries {
  constructor(
    private readonly document: Json,
    /** Receivers the service may be given: URLs are drawn under it, never an outside host. */
    private readonly receiverUrl: string,
    private readonly now = Date.now(),
  ) {}

  resolve(schema: Json): Json {
    let s = schema;
    while (s && typeof s.$ref === 'string') {
      s = s.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce(
          (node: Json, key: string) => node[key.replace(/~1/g, '/').replace(/~0/g, '~')],
          this.document,
        );
    }
    return s ?? {};
  }

  /** Values `schema` accepts (most of them: the caller filters with a validator). */
  valid(schema: Json, depth = 0): fc.Arbitrary<unknown> {
    const s = this.resolve(schema);
    const base = this.validBase(s, depth);
    return s.nullable === true ? fc.oneof({ weight: 5, arbitrary: base }, fc.constant(null)) : base;
  }

  private validBase(s: Json, depth: number): fc.Arbitrary<unknown> {
    if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
    const branches = (s.oneOf ?? s.anyOf) as Json[] | undefined;
    if (branches && !s.properties) {
      return fc.oneof(
        ...branches.map((b) =>
          this.valid({ ...s, oneOf: undefined, anyOf: undefined, ...this.resolve(b) }, depth),
        ),
      );
    }
    switch (s.type ?? (s.properties ? 'object' : undefined)) {
      case 'string':
        return this.string(s);
      case 'integer':
        return fc.integer({ min: s.minimum ?? -1_000_000, max: s.maximum ?? 1_000_000 });
      case 'number':
        return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const constraints = { minLength: s.minItems ?? 0, maxLength: Math.min(s.maxItems ?? 4, 4) };
        const items = this.valid(s.items ?? {}, depth + 1);
        return s.uniqueItems
          ? fc.uniqueArray(items, { ...constraints, selector: (v) => JSON.stringify(v) })
          : fc.array(items, constraints);
      }
      case 'object':
        return this.object(s, depth);
      default:
        return fc.constant({});
    }
  }

  private string(s: Json): fc.Arbitrary<string> {
    if (s.format === 'uuid') return fc.uuid();
    if (s.format === 'date-time') return anyTimestamp(this.now);
    if (s.format === 'email') return mailbox;
    if (s.format === 'date') return recentTimestamp(this.now).map((t) => t.slice(0, 10));
    if (s.format === 'jsonata') return fc.constantFrom('$', '{"e": event}', 'data.{"id": id}');
    if (s.format === 'uri') {
      return fc.stringMatching(/^[a-z0-9-]{0,20}$/).map((p) => `${this.receiverUrl}/${p}`);
    }
    const minLength = s.minLength ?? 0;
    const maxLength = Math.min(s.maxLength ?? 40, Math.max(minLength, 40));
    // fast-check draws from a pattern but knows no lookahead: a leading one is left to the filter.
    const drawable =
      typeof s.pattern === 'string' ? s.pattern.replace(/^\^(\(\?[!=][^()]*\))+/, '^') : undefined;
    const text =
      drawable !== undefined && !/\(\?[!=<]/.test(drawable)
        ? fc.stringMatching(new RegExp(drawable))
        : fc.string({ minLength, maxLength });
    return text.filter(
      (t) =>
        t.length >= minLength &&
        t.length <= (s.maxLength ?? Infinity) &&
        (typeof s.pattern !== 'string' || new RegExp(s.pattern, 'u').test(t)),
    );
  }

  private object(s: Json, depth: number): fc.Arbitrary<unknown> {
    const properties = (s.properties ?? {}) as Record<string, Json>;
    const model: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, property] of Object.entries(properties)) {
      if (this.resolve(property).readOnly !== true) model[name] = this.valid(property, depth + 1);
    }
    const record = fc.record(model, { requiredKeys: (s.required ?? []) as string[] });
    // Free-form objects (additionalProperties true or absent) get no keys: nothing says what
    // one would be. A typed map gets a few.
    const extra = s.additionalProperties;
    if (typeof extra !== 'object' || depth > 3) return record;
    // Keys are header names as a client gives them (`x-…`, lowercase, so each once): the typed
    // maps of request bodies are `headers` and the filter's paths, whose key rules the document
    // states in words only (OpenAPI 3.0 has no propertyNames; docs/development.md), and `x-…`
    // with one hyphen is none of the names they reserve (x-service-…, x-death, toString, …).
    const map = fc.dictionary(
      fc.stringMatching(/^x-[a-z0-9]{1,10}$/).filter((key) => key !== 'x-death'),
      this.valid(extra, depth + 1),
      {
        maxKeys: Math.min(s.maxProperties ?? 3, 3),
      },
    );
    return fc.tuple(map, record).map(([m, r]) => ({ ...m, ...r }));
  }

  /**
   * Ways to break `schema` at `value`, a valid value of it: each one keyword, named. The caller
   * keeps those its validator refuses.
   */
  invalid(schema: Json, value: unknown): Breakage[] {
    const s = this.resolve(schema);
    const out: Breakage[] = [];
    const type = s.type ?? (s.properties ? 'object' : undefined);
    if (type && type !== 'string') out.push({ broken: `type ${type}`, value: 'not-a-' + type });
    if (type === 'string') out.push({ broken: 'type string', value: 12345 });
    if (Array.isArray(s.enum)) out.push({ broken: 'enum', value: '__not_in_enum__' });
    if (s.format === 'uuid') out.push({ broken: 'format uuid', value: 'not-a-uuid' });
    if (s.format === 'date-time')
      out.push({ broken: 'format date-time', value: '2026-13-45T99:99Z' });
    if (s.format === 'date') out.push({ broken: 'format date', value: '2026-13-45' });
    if (s.format === 'email') out.push({ broken: 'format email', value: 'a..b@example.com' });
    if (s.format === 'jsonata') out.push({ broken: 'format jsonata', value: '{"a": (' });
    if (typeof s.pattern === 'string') {
      out.push({ broken: 'pattern', value: ' \t!' }, { broken: 'pattern', value: '..' });
    }
    if (typeof s.maxLength === 'number')
      out.push({ broken: 'maxLength', value: 'x'.repeat(s.maxLength + 1) });
    if (typeof s.minLength === 'number' && s.minLength > 0)
      out.push({ broken: 'minLength', value: '' });
    if (typeof s.minimum === 'number') out.push({ broken: 'minimum', value: s.minimum - 1 });
    if (typeof s.maximum === 'number') out.push({ broken: 'maximum', value: s.maximum + 1 });
    if (typeof s.minItems === 'number' && s.minItems > 0)
      out.push({ broken: 'minItems', value: [] });
    if (type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
      const object = value as Record<string, unknown>;
      if (s.additionalProperties === false) {
        out.push({ broken: 'additionalProperties', value: { ...object, not_a_field: 1 } });
      }
      for (const name of (s.required ?? []) as string[]) {
        const rest = { ...object };
        delete rest[name];
        out.push({ broken: `required ${name}`, value: rest, field: [name] });
      }
      for (const [name, property] of Object.entries((s.properties ?? {}) as Record<string, Json>)) {
        for (const inner of this.invalid(property, object[name])) {
          out.push({
            broken: `${name}: ${inner.broken}`,
            value: { ...object, [name]: inner.value },
            field: [name, ...(inner.field ?? [])],
          });
        }
      }
    }
    return out;
  }
}
