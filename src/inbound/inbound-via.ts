/**
 * How the service learned of a platform event (docs/inbound-sources.md): its webhook, its event
 * socket, or reconciliation from its reports. It changes nothing in how the event is stored,
 * de-duplicated, mapped or delivered; notifications carry it as `source.via`.
 */
export const INBOUND_VIAS = ['webhook', 'websocket', 'reconciliation'] as const;
export type InboundVia = (typeof INBOUND_VIAS)[number];
