import type { Type } from '@nestjs/common';
import type { InboundSource } from './inbound-source';
import { reconciliationSource } from './reconciliation/reconciliation.source';
import { webhookSource } from './webhook/webhook.source';
import { websocketSource } from './websocket/websocket.source';

/**
 * The ways in, one registration line each (docs/inbound-sources.md#adding-a-source), in the
 * order of INBOUND_VIAS (common/inbound-via.ts; registry.spec.ts holds the two equal): the roles' modules and the inbound status are read from here.
 */
export const INBOUND_SOURCES: readonly InboundSource[] = [
  webhookSource,
  websocketSource,
  reconciliationSource,
];

/** The sources that have a part of GET /api/inbound/status, in the registry's order. */
export const STATUS_SOURCES = INBOUND_SOURCES.filter(
  (s): s is InboundSource & Required<Pick<InboundSource, 'status'>> => s.status !== undefined,
);

/** The modules the sources load in a role serving the API, and in one running the workers. */
export const SOURCE_API_MODULES: Type[] = INBOUND_SOURCES.flatMap((s) => s.api ?? []);
export const SOURCE_WORKER_MODULES: Type[] = INBOUND_SOURCES.flatMap((s) => s.worker ?? []);
