import type { DispatcherService } from '../src/dispatcher/publish/dispatcher.service';
import type { Receiver } from '../test/support/receiver';
import { waitFor } from '../test/support/wait-for';
import { percentile } from './support';

/**
 * The delivery load beside a history bench's maintenance (retention, a partition dropped):
 * `rate` events a second published until `until` settles, each one's publish-to-arrival time.
 */
export async function latenciesUntil(
  dispatcher: DispatcherService,
  receiver: Receiver,
  path: string,
  rate: number,
  until: Promise<unknown>,
): Promise<number[]> {
  const sentAt = new Map<string, number>();
  let done = false;
  void until.finally(() => (done = true));
  const startIndex = receiver.requests(path).length;
  while (!done) {
    const at = Date.now();
    const { eventId } = await dispatcher.publish({ kind: 'job.completed', data: {} });
    sentAt.set(eventId, at);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, 1000 / rate - (Date.now() - at))),
    );
  }
  await waitFor(() => receiver.requests(path).length - startIndex >= sentAt.size, {
    timeoutMs: 60_000,
    what: 'every delivery of the load',
  });
  return receiver
    .requests(path)
    .slice(startIndex)
    .map((r) => r.receivedAt - sentAt.get((JSON.parse(r.body.toString()) as { id: string }).id)!);
}

/** One line of a load's latencies: how many, p50, p99, max. */
export function reportLatencies(label: string, latencies: number[]): void {
  console.log(
    `${label.padEnd(26)} deliveries ${String(latencies.length).padStart(5)}  ` +
      `p50 ${percentile(latencies, 0.5)} ms  p99 ${percentile(latencies, 0.99)} ms  ` +
      `max ${Math.max(...latencies)} ms`,
  );
}
