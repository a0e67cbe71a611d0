import jsonata from 'jsonata';
import type { AppConfig } from '../config/config.types';
import {
  INLINE_BUDGET_MS,
  INLINE_MAX_BODY,
  INLINE_OVERRUNS,
  InlineTemplates,
  inlineable,
} from './inline-templates';
import { ShapingService } from './shaping.service';
import { TemplateRunner } from './template-runner';

const body = JSON.stringify({
  id: 'e1',
  event: 'operation.complete',
  data: {
    topic: 'All <!channel> & hands',
    host_id: 'z8yAAAAA8bbbQ',
    files: [
      { file_type: 'MP4', download_url: 'https://x.example/1' },
      { file_type: 'M4A', download_url: 'https://x.example/2' },
    ],
  },
});
/** A body with many files (under INLINE_MAX_BODY): what a template that multiplies them works on. */
const wide = JSON.stringify({
  data: {
    files: Array.from({ length: 300 }, (_, i) => ({ file_type: 'MP4', download_url: `u${i}` })),
    big: 'y'.repeat(40_000),
  },
});

const esc = (s: string) =>
  `$replace($replace($replace(${s}, "&", "&amp;"), "<", "&lt;"), ">", "&gt;")`;
/** Templates of the inline subset: the recipes of docs/templates.md written without bindings. */
const INLINE = [
  `{"text": "Recording ready: " & ${esc('data.topic')}, "blocks": [{"type": "section", "text": ` +
    `{"type": "mrkdwn", "text": $join(data.files.("<" & download_url & "|" & file_type & ">"), "\\n")}}]}`,
  'data.host_id = "z8yAAAAA8bbbQ" ? {"type": "message", "text": "Started: " & data.topic} : {}',
  '{"meeting": data.topic, "files": [data.files.{"type": file_type, "url": download_url}]}',
  '[event, $count(data.files), $uppercase(data.files[0].file_type), $string(data.files[1])]',
  // What fails fails the same way here.
  'data.topic',
  'data.nothing',
  'null',
  '{"a": $number("x") + "y"}',
  '{"a": $lookup($, "constructor"), "b": $$.constructor}',
];
/** Templates the evaluators take: what could cost more than its values' size in one step. */
const ELSEWHERE = [
  '($esc := function($s) { $replace($s, "<", "&lt;") }; {"text": $esc(data.topic)})',
  '($f := function($n) { $f($n + 1) }; {"a": $f(0)})',
  '{"a": $count([1..10000000].($ * 2))}',
  '{"a": $pad("", 300000, "x")}',
  '{"a": $string($, true)}',
  '{"a": $join(data.files.file_type, data.topic)}',
  '{"a": $replace(data.topic, /a+/, "b")}',
  '{"a": $match(data.topic, /(a+)+$/)}',
  '{"a": $eval("$env")}',
  '{"a": $$.constructor.constructor("return process")()}',
  '{"a": data ~> $keys()}',
  '{"a": data.files^(file_type)}',
  '{"a": "MP4" in data.files.file_type}',
  '$ ~> |data|{"x": 1}|',
  '{"a": $require("fs")}',
];

describe('InlineTemplates', () => {
  const runner = new TemplateRunner(5000);
  afterAll(() => runner.close());
  // JSONata's code compiled, as in a service that has run a while: a first run's compiling may
  // overrun the budget (the evaluators answer it then), which is not what these cases test.
  beforeAll(async () => {
    const warm = new InlineTemplates();
    for (let time = 0; time < 5; time++) {
      for (const template of INLINE) await warm.render(template, time % 2 ? body : wide);
    }
  });

  it('takes the inline subset, and leaves to the evaluators what it cannot bound', () => {
    for (const template of INLINE)
      expect([template, inlineable(jsonata(template).ast())]).toEqual([template, true]);
    for (const template of ELSEWHERE)
      expect([template, inlineable(jsonata(template).ast())]).toEqual([template, false]);
  });

  it('gives what the evaluators give, for what succeeds and what fails', async () => {
    const inline = new InlineTemplates();
    for (const template of INLINE) {
      // A first run may overrun while its code compiles (the evaluators answer it then).
      const here = (await inline.render(template, body)) ?? (await inline.render(template, body));
      expect(here).not.toBeNull();
      expect([template, here]).toEqual([template, await runner.render(template, body)]);
    }
    for (const template of ELSEWHERE)
      await expect(inline.render(template, body)).resolves.toBeNull();
  });

  it('stops a template that runs long within a few ms of CPU, and sends it to the evaluators after a few times', async () => {
    const inline = new InlineTemplates();
    // 300³ steps (minutes, unbounded), yielding nothing: the time and the steps stop it.
    const template =
      '{"n": $count(data.files.($$.data.files.($$.data.files.(file_type = "none" ? 1))))}';
    const { elsewhere } = inline as unknown as { elsewhere: Map<string, true> };
    for (let time = 1; time <= INLINE_OVERRUNS; time++) {
      expect(elsewhere.has(template)).toBe(false);
      const cpu = process.cpuUsage();
      await expect(inline.render(template, wide)).resolves.toBeNull();
      const used = process.cpuUsage(cpu);
      // The bound and one step past it: far below what the template asks, and TEMPLATE_TIMEOUT_MS.
      expect((used.user + used.system) / 1000).toBeLessThan(INLINE_BUDGET_MS + 40);
    }
    expect(elsewhere.has(template)).toBe(true);
    const again = process.cpuUsage();
    await expect(inline.render(template, wide)).resolves.toBeNull();
    expect(process.cpuUsage(again).user / 1000).toBeLessThan(2);
  });

  it('stops a template whose values grow past what one step may cost, before they are built on', async () => {
    expect(wide.length).toBeLessThan(INLINE_MAX_BODY);
    const inline = new InlineTemplates();
    // Each `data` is about 55 KB: their text would be made and serialized in one step, unbounded.
    const template = `{"a": $string([${Array(12).fill('data').join(', ')}])}`;
    for (let time = 1; time <= INLINE_OVERRUNS + 1; time++) {
      await expect(inline.render(template, wide)).resolves.toBeNull();
    }
    // Stopped by the size, not the clock (but for a first run's compiling): not sent away for good.
    const { elsewhere } = inline as unknown as { elsewhere: Map<string, true> };
    expect(elsewhere.has(template)).toBe(false);
  });

  it('evaluates many at once without counting the time of one against another', async () => {
    const inline = new InlineTemplates();
    const outputs = await Promise.all(
      Array.from({ length: 200 }, () => inline.render(INLINE[2], body)),
    );
    expect(outputs.map((output) => (output === null ? 'N' : output.ok ? '.' : 'E')).join('')).toBe(
      '.'.repeat(200),
    );
    const { overruns } = inline as unknown as { overruns: Map<string, number> };
    expect(overruns.has(INLINE[2])).toBe(false);
  });

  it('leaves a body over 64 KiB to the evaluators', async () => {
    const inline = new InlineTemplates();
    const large = JSON.stringify({ data: { topic: 'x'.repeat(70_000) } });
    await expect(inline.render('{"a": data.topic}', large)).resolves.toBeNull();
  });

  it('through shaping: what inline leaves is decided by the evaluators, as before', async () => {
    const shaping = new ShapingService({ templateTimeoutMs: 5000 } as AppConfig);
    try {
      const grown = await shaping.output(
        { destinationType: 'http', template: '{"a": data.files.($$.data.big & download_url)}' },
        wide,
      );
      expect(grown).toEqual({
        ok: false,
        error: expect.stringMatching(/^template: .*at most 262144 are sent/),
      });
      await expect(
        shaping.output({ destinationType: 'http', template: INLINE[2] }, body),
      ).resolves.toEqual({
        ok: true,
        json: expect.stringContaining('"meeting":"All <!channel> & hands"'),
      });
      await expect(
        shaping.output({ destinationType: 'http', template: 'data.topic' }, body),
      ).resolves.toEqual({
        ok: false,
        error: 'template: it yielded a string, not a JSON object or array',
      });
    } finally {
      await shaping.onApplicationShutdown();
    }
  });
});
