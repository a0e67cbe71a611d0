import { VIA } from '../../../common/inbound-via';
import type { InboundSource } from '../inbound-source';
import { ReconciliationWorkerModule } from './reconciliation-worker.module';
import { ReconciliationModule } from './reconciliation.module';

/**
 * What the platform never delivered, rebuilt from its reports (docs/reconciliation.md). Its
 * runs are read at /api/reconciliations, so it has no part of the inbound status.
 */
export const reconciliationSource: InboundSource = {
  via: VIA.reconciliation,
  api: [ReconciliationModule],
  worker: [ReconciliationWorkerModule],
};
