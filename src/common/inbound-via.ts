/**
 * How the service learned of a platform event (docs/inbound-sources.md): its webhook, its event
 * socket, or reconciliation from its reports. It changes nothing in how the event is stored,
 * de-duplicated, mapped or delivered; notifications carry it as `source.via`.
 *
 * The one list of the ways in: the inbound_events check, the event catalog's enum, the
 * metrics' label and the sources' registry (src/inbound/sources/registry.ts) all derive from
 * it, so it stands on the lowest floor any of them reads (docs/architecture.md). A way in
 * written anywhere else in src/ fails src/inbound/sources/ways-in.spec.ts.
 */
export const INBOUND_VIAS = ['webhook', 'websocket', 'reconciliation'] as const;
export type InboundVia = (typeof INBOUND_VIAS)[number];

/** Each way in by its own name, for code that means one of them: `VIA.webhook`. */
export const VIA = Object.fromEntries(INBOUND_VIAS.map((via) => [via, via])) as {
  readonly [V in InboundVia]: V;
};
