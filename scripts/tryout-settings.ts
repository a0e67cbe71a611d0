/**
 * The try-out's throwaway values, shared by `npm run tryout`, `npm run receiver` and
 * `npm run send-event` so the README's recipe needs no flags. Local development only: every
 * secret here is public.
 */
export const TRYOUT = {
  /** The API client the try-out service knows, holding every scope. */
  clientId: 'tryout',
  clientSecret: 'tryout-client-secret-not-for-production',
  /** The platform app's secret token: send-event signs with it, the service verifies it. */
  zoomSecretToken: 'tryout-zoom-secret-token-not-for-production',
  /** The secret to give the webhook you create; the receiver verifies signatures with it. */
  webhookSecret: 'tryout-webhook-secret-not-for-production',
  /** What the try-out subscribes the receiver to. */
  webhookEvents: ['job.started', 'follower.gained'],
  servicePort: 3000,
  receiverPort: 4000,
  /** `--fake-platform`'s control server, which `send-event --via websocket` posts to. */
  fakePlatformPort: 4100,
  /** Where on it: the platform event's JSON, pushed over the socket the service holds. */
  socketEventsPath: '/socket/events',
  /** Its own database, apart from the `postgres` one `npm start` uses. */
  databaseUrl: 'postgres://postgres@localhost:5432/meeting_event_bridge_tryout',
  queuePrefix: 'meb-tryout',
} as const;
