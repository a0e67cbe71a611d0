import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { Job, Queue } from 'bull';

/**
 * Starts the Bull processors of this process and remembers those that stopped. Bull's
 * process() promise settles only when the queue closes, or rejects when the processor's
 * start-up fails (Redis refusing its scripts, for instance); the process then stays up but
 * takes no more jobs from that queue, which is why readiness reports it instead of the
 * rejection being merely logged. Failing the bootstrap is not possible here: Bull offers no
 * signal for a start-up that succeeded, so there is nothing to await.
 */
@Injectable()
export class QueueProcessors implements BeforeApplicationShutdown {
  private readonly logger = new Logger(QueueProcessors.name);
  private readonly stopped = new Map<string, string>();
  private readonly queues = new Set<Queue>();
  private shuttingDown = false;

  /**
   * Has Bull work `jobName` jobs with `handler`. A synchronous throw (a handler defined twice)
   * is a programming error and fails the bootstrap as it is.
   */
  start<T>(
    queue: Queue<T>,
    jobName: string,
    concurrency: number,
    handler: (job: Job<T>) => Promise<unknown>,
  ): void {
    this.queues.add(queue);
    queue.process(jobName, concurrency, handler).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      // A queue closed while its processor was still starting: nothing is lost by stopping.
      if (this.shuttingDown) {
        this.logger.debug(`${queue.name} processor stopped during shutdown: ${message}`);
        return;
      }
      this.stopped.set(queue.name, message);
      this.logger.error(
        `${queue.name} processor stopped: ${message}; final: this process takes no more jobs ` +
          'from the queue until restarted (/health/ready reports 503)',
      );
    });
  }

  /** One line per processor that stopped, for readiness; empty while all run. */
  failures(): string[] {
    return [...this.stopped].map(([queue, message]) => `${queue} processor stopped: ${message}`);
  }

  /**
   * Takes no new jobs and waits for those in flight to be recorded, before the database and
   * Redis connections close (their hooks run after this one). A job that does not finish in
   * time stays active in Redis and is retried after Bull's stalled-job check.
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    await Promise.all([...this.queues].map((queue) => queue.pause(true)));
  }
}
