import { ChildProcess, spawn } from 'node:child_process';
import { TEMPLATE_OUTPUT_MAX_BYTES } from '../webhooks/template-rules';

/** What a template made of a body: the JSON bytes to send, or why it made none. */
export type TemplateResult = { ok: true; json: string } | { ok: false; error: string };

/** Deepest a template's evaluation may nest (a recursive function that never ends). */
const MAX_DEPTH = 400;
/** Compiled templates a worker keeps, most recently first used. */
const CACHE_SIZE = 256;
/** An evaluator's heap: far above any notification and its message, far below the service's. */
const WORKER_HEAP_MB = 64;
/**
 * Most jobs sent to an evaluator in one message. One message a job cost a wake-up of the
 * evaluator and of the service each, and on a loaded machine those wake-ups, not JSONata, were
 * what a templated delivery waited for (docs/benchmarks.md#templates-and-chat-messages-benchtemplatests).
 */
const MAX_BATCH = 16;
/**
 * An evaluator silent this long (or TEMPLATE_TIMEOUT_MS, if less) with jobs still waiting behind
 * the one it runs gives those back to the queue, for another evaluator that is free: a slow
 * template holds up no batchmate for longer. Not much less: a busy machine leaves a process
 * unscheduled for tens of ms, and jobs given back for that are evaluated twice for nothing.
 */
const STALL_MS = 50;

/**
 * The evaluator's program, as text: run with `node -e`, so it runs the same under ts-jest and
 * from dist. It has JSONata and nothing else: no bindings are given to the expression, so
 * a template reaches only JSONata's built-in functions. JSONata calls the entry and exit hooks
 * (its documented time-boxing pattern) at every step, which stop a loop or a deep recursion
 * (TEMPLATE_TIMEOUT_MS of the evaluator's CPU) with an error the template's owner can read; a step that never returns (one built-in call
 * made huge) is the watchdog's, in the main thread.
 */
const WORKER_SOURCE = `
const jsonata = require(process.argv[1]);
const cache = new Map();
const compiled = (template) => {
  let expr = cache.get(template);
  if (expr) { cache.delete(template); cache.set(template, expr); return expr; }
  expr = jsonata(template);
  if (cache.size >= ${CACHE_SIZE}) cache.delete(cache.keys().next().value);
  cache.set(template, expr);
  return expr;
};
const describe = (e) => {
  const message = e && typeof e.message === 'string' ? e.message : String(e);
  const where = e && typeof e.position === 'number' ? ' at position ' + e.position : '';
  return message + where + (e && e.code ? ' (' + e.code + ')' : '');
};
const run = async ({ template, body }, timeoutMs, maxBytes) => {
  let result;
  try {
    const expr = compiled(template);
    const started = Date.now();
    const cpu = process.cpuUsage();
    let depth = 0;
    // Past the time on the clock, the CPU it used decides: on a busy machine the clock also
    // counts the time this process waited for a CPU (the watchdog bounds the clock).
    const overran = () => {
      if (Date.now() - started <= timeoutMs) return false;
      const used = process.cpuUsage(cpu);
      return (used.user + used.system) / 1000 > timeoutMs;
    };
    const check = () => {
      if (depth > ${MAX_DEPTH}) throw { message: 'it nests deeper than ${MAX_DEPTH} steps (a recursion that never ends?)' };
      if (overran()) throw { message: 'it ran longer than ' + timeoutMs + ' ms' };
    };
    expr.assign(Symbol.for('jsonata.__evaluate_entry'), (_e, _i, env) => { if (env.isParallelCall) return; depth++; check(); });
    expr.assign(Symbol.for('jsonata.__evaluate_exit'), (_e, _i, env) => { if (env.isParallelCall) return; depth--; check(); });
    const output = await expr.evaluate(JSON.parse(body));
    if (output === undefined) result = { ok: false, error: 'it yielded nothing for this body' };
    else if (typeof output !== 'object' || output === null) {
      result = { ok: false, error: 'it yielded ' + (output === null ? 'null' : 'a ' + typeof output) + ', not a JSON object or array' };
    } else {
      const json = JSON.stringify(output);
      const bytes = Buffer.byteLength(json, 'utf8');
      result = bytes > maxBytes
        ? { ok: false, error: 'its output is ' + bytes + ' bytes; at most ' + maxBytes + ' are sent' }
        : { ok: true, json };
    }
  } catch (error) {
    result = { ok: false, error: describe(error) };
  }
  return result;
};
// One job at a time, in the order sent, each answered as soon as it is done; a batch that
// arrives while one runs waits its turn.
let turn = Promise.resolve();
process.on('message', ({ jobs, timeoutMs, maxBytes }) => {
  turn = turn.then(async () => {
    for (const job of jobs) process.send({ id: job.id, result: await run(job, timeoutMs, maxBytes) });
  });
});
process.on('disconnect', () => process.exit(0));
process.send({ ready: true });
`;

interface Job {
  id: number;
  template: string;
  body: string;
  resolve(result: TemplateResult): void;
}

/** One evaluator process and the jobs sent to it, the one it runs first. */
interface Slot {
  worker: ChildProcess;
  ready: boolean;
  jobs: Job[];
  /** Ends the evaluator when the first job overruns. */
  watchdog: NodeJS.Timeout | null;
  /** Gives the jobs behind the first back when the evaluator is silent (STALL_MS). */
  stall: NodeJS.Timeout | null;
}

const failedWith = (error: string): TemplateResult => ({ ok: false, error });

/**
 * Evaluates the templates that the service's process does not (inline-templates.ts;
 * docs/templates.md#how-templates-are-evaluated) in a few child processes: a template that
 * loops, nests or grows without end costs its own delivery and nothing else. Processes, not worker threads: a worker thread that reaches its heap limit
 * can abort the whole process (Node 20 does, for JSONata's `[1..10000000]`), a child only
 * itself. Each evaluator runs one job at a time, taking them from one queue in batches of up to
 * MAX_BATCH (each answered on its own as it is done); a job is bounded by TEMPLATE_TIMEOUT_MS
 * inside it, and one that has not answered by twice that (and 100 ms for a loaded machine) or
 * that runs out of its heap is ended and replaced, failing only its job: the jobs behind it go
 * back to the queue, as they do when the evaluator is silent for STALL_MS (a job given back may
 * then be evaluated twice, harmlessly: only the evaluator that holds it answers for it).
 */
export class TemplateRunner {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private pumpSoon = false;
  private readonly jsonataPath = require.resolve('jsonata');
  private readonly stallMs: number;

  constructor(
    /** TEMPLATE_TIMEOUT_MS. */
    private readonly timeoutMs: number,
    private readonly size = 2,
    /** Most jobs an evaluator is sent at once; 1 is how it was before (bench/templates.ts). */
    private readonly batch = MAX_BATCH,
  ) {
    this.stallMs = Math.min(STALL_MS, timeoutMs);
  }

  /** The template's output for the notification body `body` (JSON text). */
  render(template: string, body: string): Promise<TemplateResult> {
    if (this.closed) return Promise.resolve(failedWith('the service is stopping'));
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, template, body, resolve });
      // Deliveries that come due together ask together: one batch for all that ask in this
      // turn of the event loop, rather than a message for the first and a batch for the rest.
      if (this.pumpSoon) return;
      this.pumpSoon = true;
      setImmediate(() => {
        this.pumpSoon = false;
        this.pump();
      });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.resolve(failedWith('the service is stopping'));
    await Promise.all(
      this.slots.splice(0).map((slot) => this.end(slot, 'the service is stopping')),
    );
  }

  private pump(): void {
    if (this.queue.length === 0) return;
    const idle = this.slots.filter((s) => s.ready && s.jobs.length === 0);
    if (idle.length === 0) {
      if (this.slots.length < this.size) this.spawn();
      return;
    }
    // Shared among the idle evaluators, so that one slow job holds up as few as can be.
    const share = Math.min(this.batch, Math.ceil(this.queue.length / idle.length));
    for (const slot of idle) {
      if (this.queue.length === 0) break;
      this.start(slot, this.queue.splice(0, share));
    }
    // More than the idle ones take: another evaluator, if there may be one.
    if (this.queue.length > 0 && this.slots.length < this.size) this.spawn();
  }

  private spawn(): Slot {
    const worker = spawn(
      process.execPath,
      [`--max-old-space-size=${WORKER_HEAP_MB}`, '-e', WORKER_SOURCE, this.jsonataPath],
      // Nothing of the service's environment: a template that escaped JSONata finds no secrets.
      // Its output is not the service's log (a heap overflow prints V8's report there).
      // JSON: jobs and answers are strings, and it cost the service less than V8's serializer.
      { env: {}, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'json' },
    );
    // Idle evaluators must not keep the service (or a test) alive.
    worker.unref();
    worker.channel?.unref();
    const slot: Slot = { worker, ready: false, jobs: [], watchdog: null, stall: null };
    this.slots.push(slot);
    worker.on('message', (message: { ready?: boolean; id?: number; result?: TemplateResult }) => {
      if (message.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      // A job given back (stall) is answered by whoever holds it now.
      const job = slot.jobs[0];
      if (job === undefined || job.id !== message.id) return;
      slot.jobs.shift();
      job.resolve(message.result!);
      this.arm(slot);
      if (slot.jobs.length === 0) this.pump();
    });
    worker.on('error', (error: Error) => {
      void this.replace(slot, `its evaluation failed: ${error.message}`);
    });
    worker.on(
      'exit',
      (_code, signal) =>
        void this.replace(
          slot,
          signal === 'SIGABRT' || signal === 'SIGTRAP'
            ? 'it used more memory than a template may'
            : 'its evaluation stopped',
        ),
    );
    return slot;
  }

  private start(slot: Slot, jobs: Job[]): void {
    slot.jobs = jobs;
    this.arm(slot);
    slot.worker.send({
      jobs: jobs.map(({ id, template, body }) => ({ id, template, body })),
      timeoutMs: this.timeoutMs,
      maxBytes: TEMPLATE_OUTPUT_MAX_BYTES,
    });
  }

  /** The timers of the slot's first job, from now: it started when the one before answered. */
  private arm(slot: Slot): void {
    this.disarm(slot);
    if (slot.jobs.length === 0) return;
    const job = slot.jobs[0];
    slot.watchdog = setTimeout(
      // After the poll phase: an answer that came while this process was not running (a busy
      // machine) is read before the evaluator is taken for stuck.
      () =>
        setImmediate(() => {
          if (slot.jobs[0] === job)
            void this.replace(slot, `it ran longer than ${this.timeoutMs} ms`);
        }),
      this.timeoutMs * 2 + 100,
    );
    if (slot.jobs.length > 1) slot.stall = setTimeout(() => this.giveBack(slot), this.stallMs);
  }

  private disarm(slot: Slot): void {
    if (slot.watchdog !== null) clearTimeout(slot.watchdog);
    if (slot.stall !== null) clearTimeout(slot.stall);
    slot.watchdog = null;
    slot.stall = null;
  }

  /**
   * The jobs waiting behind the slot's first, back to the front of the queue once another
   * evaluator is free to take them (until then they stay: a busy machine's slow wake-up would
   * otherwise have them evaluated twice for nothing).
   */
  private giveBack(slot: Slot): void {
    slot.stall = null;
    if (!this.slots.some((s) => s !== slot && s.ready && s.jobs.length === 0)) {
      if (this.slots.length < this.size) this.spawn();
      slot.stall = setTimeout(() => this.giveBack(slot), this.stallMs);
      return;
    }
    this.queue.unshift(...slot.jobs.splice(1));
    this.pump();
  }

  /**
   * Ends a worker that overran or died, fails the job it ran with `why`, gives back those
   * behind it, and lets another start.
   */
  private async replace(slot: Slot, why: string): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index === -1) return;
    this.slots.splice(index, 1);
    this.queue.unshift(...slot.jobs.splice(1));
    await this.end(slot, why);
    this.pump();
  }

  private async end(slot: Slot, why: string): Promise<void> {
    this.disarm(slot);
    for (const job of slot.jobs.splice(0)) job.resolve(failedWith(why));
    slot.worker.removeAllListeners('exit');
    if (slot.worker.exitCode !== null || slot.worker.signalCode !== null) return;
    const exited = new Promise((resolve) => slot.worker.once('exit', resolve));
    slot.worker.kill('SIGKILL');
    await exited;
  }
}
