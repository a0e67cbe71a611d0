import type { Express, Response } from 'express';
import { stringifyPrecise } from './precise-json';

/**
 * Every JSON answer written with stringifyPrecise instead of Express's JSON.stringify, so a
 * number kept by its own text (a PreciseNumber: the platform's `1e400`, `1.50`, 2^63 in the
 * event lookup) is answered as that text, never as a marked string or `null`. Answers without
 * one are the same bytes as before.
 */
export function answerPreciseNumbers(app: Express): void {
  app.response.json = function json(this: Response, body: unknown): Response {
    if (!this.get('Content-Type')) this.set('Content-Type', 'application/json');
    return this.send(stringifyPrecise(body));
  };
}
