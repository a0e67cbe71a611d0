import { join } from 'path';
import { checkQueryFile, duplicatePreparedNames } from '../../test/support/query-files';
import { DELIVERY_ORDER_STATEMENTS } from '../delivery-record/delivery-order.store';
import { DELIVERY_STORE_STATEMENTS } from '../delivery-record/delivery.store';
import { EVENT_STORE_STATEMENTS } from '../delivery-record/event.store';
import type { Statement } from '../delivery-record/statement';
import { INBOUND_EVENT_STATEMENTS } from './inbound-event.store';
import { RECONCILIATION_STATEMENTS } from './sources/reconciliation/reconciliation.store';
import { WEBHOOK_STATUS_STATEMENTS } from './sources/webhook/webhook-status';
import { SOCKET_RECORD_STATEMENTS } from './sources/websocket/socket-record.store';

/**
 * Each inbound store's statements, by the file that shows them (queries/<store>.sql): the
 * ingest with the record's fan-out part it composes, reconciliation runs, the socket's record.
 */
const FILES: Record<string, Statement[]> = {
  'inbound-event.store': INBOUND_EVENT_STATEMENTS,
  'reconciliation.store': RECONCILIATION_STATEMENTS,
  'socket-record.store': SOCKET_RECORD_STATEMENTS,
  'webhook-status': WEBHOOK_STATUS_STATEMENTS,
};

describe("inbound's statements, as PostgreSQL runs them", () => {
  it.each(Object.entries(FILES))(
    'queries/%s.sql holds every statement of the store',
    (name, statements) => {
      checkQueryFile(join(__dirname, 'queries', `${name}.sql`), statements, __filename);
    },
  );

  // PostgreSQL keeps one prepared statement per name and connection, whichever module made it.
  it('gives its prepared statements names no statement of the record has', () => {
    const all = [
      ...Object.values(FILES).flat(),
      ...DELIVERY_STORE_STATEMENTS,
      ...DELIVERY_ORDER_STATEMENTS,
      ...EVENT_STORE_STATEMENTS,
    ];
    expect(duplicatePreparedNames(all)).toEqual([]);
  });
});
