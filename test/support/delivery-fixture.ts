import { DispatcherService } from '../../src/dispatcher/publish/dispatcher.service';
import { deactivateAllWebhooks } from './deliveries';
import { HttpResult, metricSample, request } from './http';
import { Receiver, startReceiver } from './receiver';
import { TestApp, TestAppOptions, startTestApp } from './test-app';

export interface DeliveryFixture {
  readonly t: TestApp;
  readonly receiver: Receiver;
  readonly dispatcher: DispatcherService;
  /** alpha's bearer token. */
  readonly token: string;
  /** A request to the app with `client` as bearer token (alpha's by default, '' for none). */
  api(method: string, path: string, body?: unknown, client?: string): Promise<HttpResult>;
  /** One sample of the app's /metrics; 0 if absent. */
  metric(sample: string): Promise<number>;
}

/**
 * The setup of a describe block whose tests publish and watch deliveries: one app (started with
 * `options`) and one receiver for the whole block, alpha's token, and every webhook inactive at
 * the start of each test. Call it in the describe body, before the block's own hooks: it
 * registers its hooks there. The app, receiver, dispatcher and token exist once its beforeAll
 * has run, so tests and hooks read them (e.g. destructure them), the describe body does not.
 */
export function deliveryFixture(options: TestAppOptions = {}): DeliveryFixture {
  let t: TestApp | undefined;
  let receiver: Receiver | undefined;
  let dispatcher: DispatcherService | undefined;
  let token: string | undefined;

  beforeAll(async () => {
    [t, receiver] = await Promise.all([startTestApp(options), startReceiver()]);
    dispatcher = t.app.get(DispatcherService);
    token = await t.token('alpha');
  });
  afterAll(() => Promise.all([receiver?.close(), t?.close()]));
  beforeEach(() => deactivateAllWebhooks(ready(t)));

  const fixture: DeliveryFixture = {
    get t() {
      return ready(t);
    },
    get receiver() {
      return ready(receiver);
    },
    get dispatcher() {
      return ready(dispatcher);
    },
    get token() {
      return ready(token);
    },
    api: (method, path, body, client = fixture.token) =>
      request(fixture.t.baseUrl, method, path, { token: client, body }),
    metric: (sample) => metricSample(fixture.t.baseUrl, sample),
  };
  return fixture;
}

function ready<T>(value: T | undefined): T {
  if (value === undefined) {
    throw new Error('deliveryFixture: read before its beforeAll has run (or after it failed)');
  }
  return value;
}
