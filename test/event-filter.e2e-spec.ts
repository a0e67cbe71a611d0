import fc from 'fast-check';
import { Client } from 'pg';
import { PreciseNumber, storableCopy, stringifyPrecise } from '../src/common/precise-json';
import { FILTER_OPERATORS, FilterError, compileFilter } from '../src/webhooks/event-filter';
import { FILTER_BODY, FILTER_CASES } from '../src/webhooks/event-filter.cases';
import { ADMIN_DATABASE_URL } from './support/test-db';

// The fan-out statement matches a webhook's filter in PostgreSQL (jsonb_path_match); the unit
// spec checks the same table through the TypeScript predicate. Both must give every answer.
describe('filters in PostgreSQL agree with the TypeScript predicate', () => {
  let db: Client;

  beforeAll(async () => {
    db = new Client({ connectionString: ADMIN_DATABASE_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  // The body as events are stored (numbers jsonb would grow kept as text).
  const matchInPostgres = async (body: unknown, filter: unknown): Promise<boolean | null> => {
    const compiled = compileFilter(filter);
    const { rows } = await db.query<{ matched: boolean | null }>(
      'SELECT jsonb_path_match($1::jsonb, $2::jsonpath, $3::jsonb) AS matched',
      [
        stringifyPrecise(storableCopy(body).value),
        compiled.jsonpath,
        JSON.stringify(compiled.vars),
      ],
    );
    return rows[0].matched;
  };

  it.each(FILTER_CASES)('%s', async (_, filter, expected) => {
    expect(await matchInPostgres(FILTER_BODY, filter)).toBe(expected);
    expect(compileFilter(filter).matches(FILTER_BODY)).toBe(expected);
  });

  // Any text at all, U+0000 and unpaired surrogates included, in paths and operands.
  const text = fc.oneof(
    fc.constantFrom(
      'data.topic',
      'data.tags',
      'data.participants.role',
      'data.ids',
      'data.big',
      'event',
      'data',
      '',
    ),
    fc.string({ unit: 'binary', maxLength: 6 }),
    fc.string({ maxLength: 6 }),
  );
  const scalar = fc.oneof(
    text,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    // Numbers past 2^53 as read off a request's bytes.
    fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map((n) => new PreciseNumber(n.toString())),
    fc.boolean(),
    fc.constant(null),
  );
  const operand = fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }), fc.constant({}));
  const operator = fc.constantFrom(...FILTER_OPERATORS, '$regex', '$and', '$or', '$not', 'x');
  const { filter } = fc.letrec<{ filter: Record<string, unknown>; node: unknown }>((tie) => ({
    filter: fc.dictionary(fc.oneof(text, fc.constantFrom('$and', '$or', '$not')), tie('node'), {
      maxKeys: 3,
      depthIdentifier: 'filter',
    }),
    node: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      scalar,
      fc.dictionary(operator, operand, { maxKeys: 2 }),
      fc.array(tie('filter'), { maxLength: 3, depthIdentifier: 'filter' }),
      tie('filter'),
    ),
  }));

  it('PostgreSQL takes whatever compileFilter accepts, and both give the same answer (property-based)', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(filter, async (candidate) => {
        let compiled;
        try {
          compiled = compileFilter(candidate);
        } catch (error) {
          if (error instanceof FilterError) return;
          throw error;
        }
        accepted += 1;
        expect(await matchInPostgres(FILTER_BODY, candidate)).toBe(compiled.matches(FILTER_BODY));
      }),
      { numRuns: 1500 },
    );
    // The generator must reach the compile's accepting side, or the property says nothing.
    expect(accepted).toBeGreaterThan(100);
  });
});
