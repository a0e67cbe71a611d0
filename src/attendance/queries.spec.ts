import { join } from 'path';
import { checkQueryFile } from '../../test/support/query-files';
import { ATTENDANCE_STATEMENTS } from './attendance.store';

describe("the attendance store's statements, as PostgreSQL runs them", () => {
  it('queries/attendance.store.sql holds every statement of the store', () => {
    checkQueryFile(
      join(__dirname, 'queries', 'attendance.store.sql'),
      ATTENDANCE_STATEMENTS,
      __filename,
    );
  });
});
