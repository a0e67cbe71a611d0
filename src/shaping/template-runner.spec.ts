import { TemplateRunner } from './template-runner';

const body = JSON.stringify({
  id: 'e1',
  event: 'job.started',
  data: { topic: 'All hands', host_id: 'h1' },
});

describe('TemplateRunner', () => {
  const runner = new TemplateRunner(50);
  // For what must not depend on a loaded machine's scheduling: the size bound, the quick ones.
  const patient = new TemplateRunner(5000);
  afterAll(() => Promise.all([runner.close(), patient.close()]));

  it('evaluates a template over the body', async () => {
    await expect(runner.render('{"text": "Started: " & data.topic}', body)).resolves.toEqual({
      ok: true,
      json: '{"text":"Started: All hands"}',
    });
    await expect(runner.render('[event, data.host_id]', body)).resolves.toEqual({
      ok: true,
      json: '["job.started","h1"]',
    });
  });

  it.each([
    ['nothing', 'data.missing', /yielded nothing/],
    ['a string', 'data.topic', /yielded a string, not a JSON object or array/],
    ['null', 'null', /yielded null/],
    ['an evaluation error', '{"a": $number("x") + "y"}', /T2001|D3030|number/],
  ])('fails a template that yields %s', async (_what, template, error) => {
    const result = await runner.render(template, body);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.error).toMatch(error);
  });

  it('stops a template that never ends, and one that recurses without end', async () => {
    const loop = await runner.render(
      '($f := function($n) { $n > -1 ? $f($n + 1) : 0 }; {"a": $f(0)})',
      body,
    );
    expect(loop).toEqual({ ok: false, error: expect.stringMatching(/nests deeper|ran longer/) });
    const spin = await runner.render('{"a": $count([1..10000000].($ * 2))}', body);
    expect(spin).toEqual({ ok: false, error: expect.stringMatching(/ran longer|memory/) });
  });

  it('stops a template whose output grows without bound', async () => {
    const growth = await runner.render(
      '($f := function($s) { $f($s & $s) }; {"a": $f("x")})',
      body,
    );
    expect(growth.ok).toBe(false);
    const big = await patient.render('{"a": $pad("", 300000, "x")}', body);
    expect(big).toEqual({ ok: false, error: expect.stringMatching(/at most 262144 are sent/) });
  });

  it('offers nothing of the process to a template', async () => {
    for (const template of [
      '{"a": $eval("$env")}',
      '{"a": $string.constructor}',
      '{"a": $lookup($, "constructor")("return process")()}',
      '{"a": $$.constructor.constructor("return process.env")()}',
      '{"a": $process}',
      '{"a": $require("fs")}',
    ]) {
      const result = await runner.render(template, body);
      if (result.ok) expect(result.json).not.toMatch(/PATH|HOME|function/);
    }
    // The runner is still well after all of them.
    await expect(runner.render('{"ok": true}', body)).resolves.toEqual({
      ok: true,
      json: '{"ok":true}',
    });
  });

  it('answers each of many jobs at once with its own output', async () => {
    const outputs = await Promise.all(
      Array.from({ length: 200 }, (_, i) => patient.render(`{"n": ${i} * 2}`, body)),
    );
    expect(outputs).toEqual(
      Array.from({ length: 200 }, (_, i) => ({ ok: true, json: `{"n":${i * 2}}` })),
    );
  });

  it('keeps other templates going while one runs too long', async () => {
    // A bound long enough for the quick ones on a loaded machine, short of the slow one's need.
    const pool = new TemplateRunner(1000);
    try {
      const slow = pool.render('{"a": $count([1..10000000].($ * 2))}', body);
      const quick = await Promise.all(
        Array.from({ length: 20 }, (_, i) => pool.render(`{"n": ${i}}`, body)),
      );
      // Batched to the evaluators and given back from behind the slow one: each its own answer.
      expect(quick).toEqual(
        Array.from({ length: 20 }, (_, i) => ({ ok: true, json: `{"n":${i}}` })),
      );
      expect(await slow).toEqual({ ok: false, error: expect.stringMatching(/ran longer|memory/) });
    } finally {
      await pool.close();
    }
  });
});
