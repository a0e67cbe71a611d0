import { Client } from 'pg';
import { compileFilter } from '../src/webhooks/event-filter';
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

  it.each(FILTER_CASES)('%s', async (_, filter, expected) => {
    const compiled = compileFilter(filter);
    const { rows } = await db.query<{ matched: boolean | null }>(
      'SELECT jsonb_path_match($1::jsonb, $2::jsonpath, $3::jsonb) AS matched',
      [JSON.stringify(FILTER_BODY), compiled.jsonpath, JSON.stringify(compiled.vars)],
    );
    expect(rows[0].matched).toBe(expected);
    expect(compiled.matches(FILTER_BODY)).toBe(expected);
  });
});
