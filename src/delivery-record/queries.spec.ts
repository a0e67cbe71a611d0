import { join } from 'path';
import { checkQueryFile, duplicatePreparedNames } from '../../test/support/query-files';
import { DELIVERY_CONTROL_STATEMENTS } from './delivery-control.store';
import { DELIVERY_LOG_STATEMENTS } from './delivery-log.store';
import { DELIVERY_ORDER_STATEMENTS } from './delivery-order.store';
import { DELIVERY_SWEEP_STATEMENTS } from './delivery-sweep.store';
import { DELIVERY_STORE_STATEMENTS } from './delivery.store';
import { EVENT_LOOKUP_STATEMENTS } from './event-lookup.store';
import { EVENT_STORE_STATEMENTS } from './event.store';
import { OPERATIONAL_EVENT_STATEMENTS } from './operational-events.store';
import { RECEIVER_HEALTH_STATEMENTS } from './receiver-health.store';
import { RECORD_RETENTION_STATEMENTS } from './record-retention.store';
import { Statement } from './statement';

/** Each store's statements, by the file that shows them (queries/<store>.sql). */
const FILES: Record<string, Statement[]> = {
  'delivery.store': DELIVERY_STORE_STATEMENTS,
  'delivery-order.store': DELIVERY_ORDER_STATEMENTS,
  'delivery-control.store': DELIVERY_CONTROL_STATEMENTS,
  'delivery-log.store': DELIVERY_LOG_STATEMENTS,
  'delivery-sweep.store': DELIVERY_SWEEP_STATEMENTS,
  'event.store': EVENT_STORE_STATEMENTS,
  'event-lookup.store': EVENT_LOOKUP_STATEMENTS,
  'operational-events.store': OPERATIONAL_EVENT_STATEMENTS,
  'receiver-health.store': RECEIVER_HEALTH_STATEMENTS,
  'record-retention.store': RECORD_RETENTION_STATEMENTS,
};

describe("the delivery record's statements, as PostgreSQL runs them", () => {
  it.each(Object.entries(FILES))(
    'queries/%s.sql holds every statement of the store',
    (name, statements) => {
      checkQueryFile(join(__dirname, 'queries', `${name}.sql`), statements, __filename);
    },
  );

  it('gives every prepared statement a name of its own', () => {
    const all = Object.values(FILES).flat();
    expect(duplicatePreparedNames(all)).toEqual([]);
  });
});
