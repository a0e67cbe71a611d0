import { Controller, Get, INestApplication, Logger, NotFoundException } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import type { AddressInfo } from 'node:net';
import { DatabaseError } from 'pg';
import { QueryFailedError } from 'typeorm';
import { AllExceptionsFilter } from './all-exceptions.filter';

const SQL = 'INSERT INTO "webhooks"("client_id", "url") VALUES ($1, $2) RETURNING "id"';
const PARAMETERS = ['alpha', 'https://hooks.example.com/private-parameter-value'];

/** A failed query as TypeORM raises it from pg: the SQL, its parameters, the driver's fields. */
function queryFailed(): QueryFailedError {
  const driverError = new DatabaseError(
    'duplicate key value violates unique constraint "webhooks_pkey"',
    120,
    'error',
  );
  Object.assign(driverError, {
    severity: 'ERROR',
    code: '23505',
    detail: 'Key (id)=(6f1c5c3e-0000-4000-8000-000000000000) already exists.',
    table: 'webhooks',
    constraint: 'webhooks_pkey',
    routine: '_bt_check_unique',
  });
  return new QueryFailedError(SQL, PARAMETERS, driverError);
}

@Controller()
class ThrowingController {
  @Get('plain')
  plain(): never {
    throw new Error('connect ECONNREFUSED 10.1.2.3:5432 at /srv/app/src/secret-path.ts');
  }

  @Get('query')
  query(): never {
    throw queryFailed();
  }

  @Get('not-an-error')
  notAnError(): never {
    // Something that is not an Error at all (a rejected promise of a plain object).
    throw { query: SQL, parameters: PARAMETERS };
  }

  @Get('not-found')
  notFound(): never {
    throw new NotFoundException('Webhook not found');
  }
}

describe('AllExceptionsFilter', () => {
  let app: INestApplication;
  let baseUrl: string;
  let logged: string[];

  beforeAll(async () => {
    const module = await Test.createTestingModule({
      controllers: [ThrowingController],
      providers: [{ provide: APP_FILTER, useClass: AllExceptionsFilter }],
    }).compile();
    app = module.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app.close());

  beforeEach(() => {
    logged = [];
    jest
      .spyOn(Logger.prototype, 'error')
      .mockImplementation((message: unknown) => void logged.push(String(message)));
  });
  afterEach(() => jest.restoreAllMocks());

  const get = async (path: string) => {
    const res = await fetch(`${baseUrl}${path}`);
    return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
  };

  it.each(['/plain', '/query', '/not-an-error'])(
    'answers %s with a bare 500 in the docs/api.md#errors shape',
    async (path) => {
      const res = await get(path);
      expect(res.status).toBe(500);
      expect(res.type).toMatch(/^application\/json/);
      expect(JSON.parse(res.text)).toEqual({
        statusCode: 500,
        error: 'Internal Server Error',
        message: 'Internal server error',
      });
    },
  );

  it('puts no SQL, parameter, driver detail, message or stack of a failed query in the body', async () => {
    const res = await get('/query');
    for (const leak of [
      'INSERT',
      'webhooks',
      'RETURNING',
      ...PARAMETERS,
      '23505',
      'duplicate key',
      'already exists',
      '_bt_check_unique',
      'QueryFailedError',
      '.ts:',
      '    at ',
    ]) {
      expect({ leak, found: res.text.includes(leak) }).toEqual({ leak, found: false });
    }
  });

  it('puts neither the message nor the stack of a plain Error in the body', async () => {
    const res = await get('/plain');
    expect(res.text).not.toMatch(/ECONNREFUSED|10\.1\.2\.3|secret-path|\s+at\s|\.ts:\d+/);
  });

  it('logs an unexpected error with its stack, but not the parameters of a failed query', async () => {
    await get('/query');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toContain('duplicate key value violates unique constraint');
    expect(logged[0]).toMatch(/\n\s+at /);
    for (const parameter of PARAMETERS) expect(logged[0]).not.toContain(parameter);
  });

  it('keeps an HttpException’s own status and message, and logs nothing for it', async () => {
    const res = await get('/not-found');
    expect(res.status).toBe(404);
    expect(JSON.parse(res.text)).toEqual({
      statusCode: 404,
      error: 'Not Found',
      message: 'Webhook not found',
    });
    expect(logged).toEqual([]);
  });
});
