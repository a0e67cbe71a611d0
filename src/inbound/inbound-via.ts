/** How the service learned of a platform event (docs/inbound-sources.md). */
export type InboundVia = 'webhook' | 'websocket' | 'reconciliation';
