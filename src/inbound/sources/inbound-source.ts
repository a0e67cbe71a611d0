import type { Type } from '@nestjs/common';
import type { InboundVia } from '../../common/inbound-via';

/** A source's part of GET /api/inbound/status (docs/inbound-sources.md#status), read afresh. */
export interface SourceStatusReader<Part = unknown> {
  read(): Promise<Part>;
}

/**
 * One way in (docs/inbound-sources.md), as src/inbound/sources/registry.ts registers it: its
 * name from INBOUND_VIAS, the modules each role loads for it, and its part of the status.
 */
export interface InboundSource<Part = unknown> {
  via: InboundVia;
  /** Loaded where the role serves the API (api, all). */
  api?: Type[];
  /** Loaded where the role runs the workers (worker, all). */
  worker?: Type[];
  /** Its part of the status, under its name; a source without one is not shown there. */
  status?: {
    /** The module that exports what the reader needs, where that is not global. */
    module?: Type;
    reader: Type<SourceStatusReader<Part>>;
    /** The documented shape of the part (Swagger). */
    response: Type<Part>;
  };
}
