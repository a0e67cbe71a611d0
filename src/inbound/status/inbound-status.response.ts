import { ApiProperty } from '@nestjs/swagger';
import type { InboundVia } from '../../common/inbound-via';
import { STATUS_SOURCES } from '../sources/registry';

/**
 * GET /api/inbound/status (docs/inbound-sources.md#status): each source's part under its
 * name. Its properties are the registry's, documented below as each source documents its part.
 */
export class InboundStatusResponse implements Partial<Record<InboundVia, unknown>> {}

for (const source of STATUS_SOURCES) {
  ApiProperty({ type: source.status.response })(InboundStatusResponse.prototype, source.via);
}
