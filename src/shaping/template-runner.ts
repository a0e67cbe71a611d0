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
 * The evaluator's program, as text: run with `node -e`, so it runs the same under ts-jest and
 * from dist. It has JSONata and nothing else: no bindings are given to the expression, so
 * a template reaches only JSONata's built-in functions. JSONata calls the entry and exit hooks
 * (its documented time-boxing pattern) at every step, which stop a loop or a deep recursion
 * with an error the template's owner can read; a step that never returns (one built-in call
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
process.on('message', async ({ id, template, body, timeoutMs, maxBytes }) => {
  let result;
  try {
    const expr = compiled(template);
    const started = Date.now();
    let depth = 0;
    const check = () => {
      if (depth > ${MAX_DEPTH}) throw { message: 'it nests deeper than ${MAX_DEPTH} steps (a recursion that never ends?)' };
      if (Date.now() - started > timeoutMs) throw { message: 'it ran longer than ' + timeoutMs + ' ms' };
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
  process.send({ id, result });
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

/** One evaluator process and the job it runs, if any. */
interface Slot {
  worker: ChildProcess;
  ready: boolean;
  job: Job | null;
  watchdog: NodeJS.Timeout | null;
}

const failedWith = (error: string): TemplateResult => ({ ok: false, error });

/**
 * Evaluates templates (docs/templates.md) in a few child processes, never in the process that
 * sends deliveries: a template that loops, nests or grows without end costs its own delivery
 * and nothing else. Processes, not worker threads: a worker thread that reaches its heap limit
 * can abort the whole process (Node 20 does, for JSONata's `[1..10000000]`), a child only
 * itself. Each evaluator runs one job at a time, from one queue; a job is bounded by
 * TEMPLATE_TIMEOUT_MS inside it, and one that has not answered by twice that (and 100 ms for a
 * loaded machine) or that runs out of its heap is ended and replaced, failing only its job.
 */
export class TemplateRunner {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  private readonly jsonataPath = require.resolve('jsonata');

  constructor(
    /** TEMPLATE_TIMEOUT_MS. */
    private readonly timeoutMs: number,
    private readonly size = 2,
  ) {}

  /** The template's output for the notification body `body` (JSON text). */
  render(template: string, body: string): Promise<TemplateResult> {
    if (this.closed) return Promise.resolve(failedWith('the service is stopping'));
    return new Promise((resolve) => {
      this.queue.push({ id: this.nextId++, template, body, resolve });
      this.pump();
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
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => s.ready && s.job === null);
      if (slot === undefined) {
        if (this.slots.length < this.size) this.spawn();
        return;
      }
      this.start(slot, this.queue.shift()!);
      slot = undefined;
    }
  }

  private spawn(): Slot {
    const worker = spawn(
      process.execPath,
      [`--max-old-space-size=${WORKER_HEAP_MB}`, '-e', WORKER_SOURCE, this.jsonataPath],
      // Nothing of the service's environment: a template that escaped JSONata finds no secrets.
      // Its output is not the service's log (a heap overflow prints V8's report there).
      { env: {}, stdio: ['ignore', 'ignore', 'ignore', 'ipc'], serialization: 'advanced' },
    );
    // Idle evaluators must not keep the service (or a test) alive.
    worker.unref();
    worker.channel?.unref();
    const slot: Slot = { worker, ready: false, job: null, watchdog: null };
    this.slots.push(slot);
    worker.on('message', (message: { ready?: boolean; id?: number; result?: TemplateResult }) => {
      if (message.ready) {
        slot.ready = true;
        this.pump();
        return;
      }
      const job = slot.job;
      if (job === null || job.id !== message.id) return;
      this.finish(slot, message.result!);
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

  private start(slot: Slot, job: Job): void {
    slot.job = job;
    slot.watchdog = setTimeout(
      () => void this.replace(slot, `it ran longer than ${this.timeoutMs} ms`),
      this.timeoutMs * 2 + 100,
    );
    slot.worker.send({
      id: job.id,
      template: job.template,
      body: job.body,
      timeoutMs: this.timeoutMs,
      maxBytes: TEMPLATE_OUTPUT_MAX_BYTES,
    });
  }

  private finish(slot: Slot, result: TemplateResult): void {
    const job = slot.job;
    if (slot.watchdog !== null) clearTimeout(slot.watchdog);
    slot.job = null;
    slot.watchdog = null;
    job?.resolve(result);
    this.pump();
  }

  /** Ends a worker that overran or died, fails its job with `why`, and lets another start. */
  private async replace(slot: Slot, why: string): Promise<void> {
    const index = this.slots.indexOf(slot);
    if (index === -1) return;
    this.slots.splice(index, 1);
    await this.end(slot, why);
    this.pump();
  }

  private async end(slot: Slot, why: string): Promise<void> {
    if (slot.watchdog !== null) clearTimeout(slot.watchdog);
    const job = slot.job;
    slot.job = null;
    job?.resolve(failedWith(why));
    slot.worker.removeAllListeners('exit');
    if (slot.worker.exitCode !== null || slot.worker.signalCode !== null) return;
    const exited = new Promise((resolve) => slot.worker.once('exit', resolve));
    slot.worker.kill('SIGKILL');
    await exited;
  }
}
