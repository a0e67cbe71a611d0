import { PLATFORM_OPERATIONS } from '../platform-api/platform-operations';
import { MEETING_GROUPS } from './meetings.module';

describe('the passthrough modules', () => {
  it('serve every group of the route table: meetings the four, recordings Cloud Recording', () => {
    const groups = new Set(PLATFORM_OPERATIONS.map((op) => op.group));
    expect([...groups].sort()).toEqual([...MEETING_GROUPS, 'Cloud Recording'].sort());
  });
});
