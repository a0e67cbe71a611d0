import type { DestinationProvider } from '../destination-provider';

/** docs/api.md#notifications: a POST to the webhook's `url`. */
export interface HttpDestinationObject {
  type: 'http';
}

export const httpDestination: DestinationProvider<HttpDestinationObject> = {
  type: 'http',
  label: 'HTTP',
  properties: {},
  required: [],
  summary: 'POSTs them to `url`',
  check: () => null,
  async sender(settings) {
    // Loaded here: the registry is read by the config loader and the CLI, which never send.
    const { HttpSender } = await import('./http.sender');
    return new HttpSender(settings);
  },
};
