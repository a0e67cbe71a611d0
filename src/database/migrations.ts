import { InitialSchema1763800000000 } from './migrations/1763800000000-initial-schema';
import { DeliveryAttemptsUnique1764000000004 } from './migrations/1764000000004-delivery-attempts-unique';
import { WebhookSecretRotation1764100000000 } from './migrations/1764100000000-webhook-secret-rotation';
import { ReceiverHealth1764100000014 } from './migrations/1764100000014-receiver-health';
import { InboundFidelity1764100000016 } from './migrations/1764100000016-inbound-fidelity';
import { DeliveryLease1764100000017 } from './migrations/1764100000017-delivery-lease';
import { EventBody1764100000018 } from './migrations/1764100000018-event-body';
import { DeliveryEventKey1764100000019 } from './migrations/1764100000019-delivery-event-key';
import { WebhookDeliveryLimits1765000001000 } from './migrations/1765000001000-webhook-delivery-limits';
import { InboundRawBody1765000003000 } from './migrations/1765000003000-inbound-raw-body';
import { TraceContext1765000004000 } from './migrations/1765000004000-trace-context';
import { WebhookDestinations1765000006000 } from './migrations/1765000006000-webhook-destinations';
import { DeliveryOrdering1765000007000 } from './migrations/1765000007000-delivery-ordering';
import { WebhookTimestampPrecision1765000008000 } from './migrations/1765000008000-webhook-timestamp-precision';
import { TimeOrderedIds1765000050000 } from './migrations/1765000050000-time-ordered-ids';
import { InboundProcessAttempts1765000060000 } from './migrations/1765000060000-inbound-process-attempts';
import { InboundSources1766000000000 } from './migrations/1766000000000-inbound-sources';
import { WebsocketSource1766000039000 } from './migrations/1766000039000-websocket-source';
import { WebhookFilterHistory1766000037140 } from './migrations/1766000037140-webhook-filter-history';
import { ReconciliationRuns1766000100000 } from './migrations/1766000100000-reconciliation-runs';
import { ParticipantIdentityKeys1766000100001 } from './migrations/1766000100001-participant-identity-keys';
import { ChatTemplates1767000048417 } from './migrations/1767000048417-chat-templates';
import { PlatformInstallations1767000490349 } from './migrations/1767000490349-platform-installations';
import { Attendance1767000500731 } from './migrations/1767000500731-attendance';
import { ReconciliationAnnounced1767046133417 } from './migrations/1767046133417-reconciliation-announced';
import { AttendanceHistory1767100000000 } from './migrations/1767100000000-attendance-history';
import { InstallationRenewAt1767100000100 } from './migrations/1767100000100-installation-renew-at';
import { ReconciliationAccount1767100000101 } from './migrations/1767100000101-reconciliation-account';
import { HistoryPartitions1768000000000 } from './migrations/1768000000000-history-partitions';
import { IngestClaimsKeys1768000000100 } from './migrations/1768000000100-ingest-claims-keys';
import { WebhookOwnerEvents1768100000000 } from './migrations/1768100000000-webhook-owner-events';

/** Every migration, in order. New migrations are appended here. */
export const MIGRATIONS = [
  InitialSchema1763800000000,
  DeliveryAttemptsUnique1764000000004,
  WebhookSecretRotation1764100000000,
  ReceiverHealth1764100000014,
  InboundFidelity1764100000016,
  DeliveryLease1764100000017,
  EventBody1764100000018,
  DeliveryEventKey1764100000019,
  WebhookDeliveryLimits1765000001000,
  InboundRawBody1765000003000,
  TraceContext1765000004000,
  WebhookDestinations1765000006000,
  DeliveryOrdering1765000007000,
  WebhookTimestampPrecision1765000008000,
  TimeOrderedIds1765000050000,
  InboundProcessAttempts1765000060000,
  InboundSources1766000000000,
  WebhookFilterHistory1766000037140,
  WebsocketSource1766000039000,
  ReconciliationRuns1766000100000,
  ParticipantIdentityKeys1766000100001,
  ChatTemplates1767000048417,
  PlatformInstallations1767000490349,
  Attendance1767000500731,
  ReconciliationAnnounced1767046133417,
  AttendanceHistory1767100000000,
  InstallationRenewAt1767100000100,
  ReconciliationAccount1767100000101,
  HistoryPartitions1768000000000,
  IngestClaimsKeys1768000000100,
  WebhookOwnerEvents1768100000000,
];
