import type { Request, Response } from 'express';
import { ApiError } from './api-error';
import { MAX_JSON_DEPTH, TOO_DEEP_MESSAGE, exceedsJsonDepth, limitJsonDepth } from './json-depth';

/** `depth` levels of alternating objects and arrays, parsed as the body parser would. */
const nested = (depth: number): unknown => {
  let text = '1';
  for (let i = 0; i < depth; i++) text = i % 2 ? `[${text}]` : `{"a":${text}}`;
  return JSON.parse(text);
};

const middlewareOutcome = (body: unknown): unknown => {
  let passed: unknown = 'not called';
  limitJsonDepth({ body } as Request, {} as Response, (error?: unknown) => (passed = error));
  return passed;
};

describe('exceedsJsonDepth', () => {
  it('allows exactly MAX_JSON_DEPTH levels and refuses one more', () => {
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(exceedsJsonDepth(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });

  it('counts scalars as no level and finds a deep branch beside shallow ones', () => {
    expect(exceedsJsonDepth('text')).toBe(false);
    expect(exceedsJsonDepth(null)).toBe(false);
    expect(exceedsJsonDepth({ a: 1, b: [1, 2], c: { d: nested(MAX_JSON_DEPTH) } })).toBe(true);
    expect(exceedsJsonDepth([1, { a: [] }, nested(MAX_JSON_DEPTH - 1)])).toBe(false);
  });

  it('walks a body far deeper than the stack allows without recursing', () => {
    const depth = 400_000;
    const deep: unknown = JSON.parse('['.repeat(depth) + ']'.repeat(depth));
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    expect(exceedsJsonDepth(deep)).toBe(true);
  });
});

describe('limitJsonDepth', () => {
  it('answers a too deep body with 400 and passes others on', () => {
    const error = middlewareOutcome(nested(MAX_JSON_DEPTH + 1));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).getStatus()).toBe(400);
    expect((error as ApiError).message).toBe(TOO_DEEP_MESSAGE);
    expect(middlewareOutcome(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(middlewareOutcome(undefined)).toBeUndefined();
  });

  it('leaves raw bodies to their route', () => {
    expect(middlewareOutcome(Buffer.from('['.repeat(100)))).toBeUndefined();
  });
});
