import { INBOUND_VIAS } from '../../common/inbound-via';
import { INBOUND_SOURCES, STATUS_SOURCES } from './registry';

describe('the inbound sources registry', () => {
  it('registers one source for each way in, in the list order', () => {
    expect(INBOUND_SOURCES.map((source) => source.via)).toEqual([...INBOUND_VIAS]);
  });

  it('shows the webhook and the socket in the status, as docs/inbound-sources.md#status says', () => {
    expect(STATUS_SOURCES.map((source) => source.via)).toEqual(['webhook', 'websocket']);
  });
});
