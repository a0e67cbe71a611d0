import { loadConfig } from '../config/load-config';
import { startupProblem } from './startup-problems';

const config = loadConfig({
  PORT: '3100',
  DATABASE_URL: 'postgres://app:hunter2@db.internal:5433/bridge',
  REDIS_URL: 'redis://cache.internal:6380',
});

const error = (fields: Record<string, unknown>) => Object.assign(new Error('boom'), fields);

describe('startupProblem', () => {
  it('names PORT when it is taken', () => {
    expect(
      startupProblem(error({ code: 'EADDRINUSE', syscall: 'listen', port: 3100 }), config),
    ).toBe(
      'PORT 3100 is already in use (another npm start or npm run tryout?): stop that process, or set PORT to a free port',
    );
  });

  it('names DATABASE_URL, without its password, when PostgreSQL is away', () => {
    const problem = startupProblem(
      error({ code: 'ECONNREFUSED', syscall: 'connect', address: 'db.internal', port: 5433 }),
      config,
    );
    expect(problem).toBe(
      'PostgreSQL at db.internal:5433/bridge (DATABASE_URL) cannot be reached: connection refused. ' +
        'Check DATABASE_URL and that PostgreSQL is running and accepts connections',
    );
    expect(problem).not.toContain('hunter2');
  });

  it('names DATABASE_URL when PostgreSQL refuses the login or has no such database', () => {
    expect(startupProblem(error({ code: '28P01' }), config)).toMatch(
      /^PostgreSQL at db\.internal:5433\/bridge \(DATABASE_URL\) refused the connection: password authentication failed/,
    );
    expect(startupProblem(error({ code: '3D000' }), config)).toContain(
      'the database does not exist',
    );
  });

  it('names REDIS_URL when the error is about Redis', () => {
    expect(
      startupProblem(error({ code: 'ENOTFOUND', hostname: 'cache.internal', port: 6380 }), config),
    ).toBe(
      'Redis at cache.internal:6380 (REDIS_URL) cannot be reached: host not found. ' +
        'Check REDIS_URL and that Redis is running and accepts connections',
    );
  });

  it('says nothing of an error it does not know', () => {
    expect(startupProblem(new Error('something else'), config)).toBeUndefined();
    expect(startupProblem('text', config)).toBeUndefined();
  });
});
