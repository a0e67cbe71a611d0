import { readFileSync } from 'node:fs';
import { NotFoundException } from '@nestjs/common';
import { ApiError } from './api-error';
import { PARSER_MESSAGES, bodyParserError } from './request-body';

/** An error as http-errors builds it for body-parser: status, expose and a type. */
const parserError = (status: number, message: string, fields: object = {}) =>
  Object.assign(new Error(message), { status, statusCode: status, expose: true, ...fields });

const answered = (error: unknown) => {
  const mapped = bodyParserError(error);
  expect(mapped).toBeInstanceOf(ApiError);
  return { status: (mapped as ApiError).getStatus(), message: (mapped as ApiError).message };
};

describe('bodyParserError', () => {
  it('says the body is not JSON, with the parser’s reason', () => {
    const error = parserError(400, 'Unexpected end of JSON input', {
      type: 'entity.parse.failed',
    });
    expect(answered(error)).toEqual({
      status: 400,
      message: 'Request body is not valid JSON: Unexpected end of JSON input',
    });
  });

  it('keeps the status of each parser failure and names what was wrong', () => {
    expect(answered(parserError(413, 'too large', { type: 'entity.too.large' }))).toEqual({
      status: 413,
      message: 'Request body is larger than 1 MiB',
    });
    expect(
      answered(parserError(415, 'x', { type: 'encoding.unsupported', encoding: 'x-squash' })),
    ).toEqual({
      status: 415,
      message: 'Content-Encoding x-squash is not supported; use gzip, deflate, br or identity',
    });
    expect(
      answered(parserError(415, 'x', { type: 'charset.unsupported', charset: 'koi8-r' })),
    ).toEqual({ status: 415, message: 'Request body charset koi8-r is not supported; send utf-8' });
  });

  it('answers a body its Content-Encoding cannot decode (a zlib error, no type) with 400', () => {
    const zlib = parserError(400, 'incorrect header check', { code: 'Z_DATA_ERROR' });
    expect(answered(zlib)).toEqual({
      status: 400,
      message: 'Request body could not be read: it does not match its Content-Encoding',
    });
  });

  it('passes on what is not a client error of a parser unchanged', () => {
    const notFound = new NotFoundException('Webhook not found');
    const broken = parserError(500, 'stream is not readable', { type: 'stream.not.readable' });
    const plain = new Error('boom');
    for (const error of [notFound, broken, plain, undefined, 'text']) {
      expect(bodyParserError(error)).toBe(error);
    }
  });
});

describe('PARSER_MESSAGES', () => {
  /** Every `type` the body parsers attach to an error with a 4xx status, read from their code. */
  const clientErrorTypes = (): string[] => {
    const files = [
      require.resolve('body-parser/lib/read.js'),
      require.resolve('body-parser/lib/types/json.js'),
      require.resolve('body-parser/lib/types/urlencoded.js'),
      require.resolve('body-parser/lib/types/raw.js'),
      require.resolve('raw-body'),
    ];
    const types = new Set<string>();
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      // createError(4xx, …, { …, type: '…' }), not reaching into the next createError call.
      const calls =
        /createError\(4\d\d,(?:(?!createError)[\s\S]){0,300}?type:\s*(?:err\.type\s*\|\|\s*)?'([^']+)'/g;
      for (const [, type] of source.matchAll(calls)) types.add(type);
    }
    return [...types].sort();
  };

  it('has a message for every client error the body parsers raise', () => {
    const types = clientErrorTypes();
    // The scan itself must find what it looks for, or this test would pass on nothing.
    expect(types).toEqual(
      expect.arrayContaining(['entity.parse.failed', 'entity.too.large', 'charset.unsupported']),
    );
    expect(types.filter((type) => !(type in PARSER_MESSAGES))).toEqual([]);
  });
});
