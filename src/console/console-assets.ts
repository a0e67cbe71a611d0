import { HttpStatus, Logger } from '@nestjs/common';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../common/api-error';

export const CONSOLE_PATH = 'console';

/**
 * Where `npm run build` puts the console (Vite, console/vite.config.ts): dist/console-app
 * beside the compiled server, or, when the server runs from src/ (ts-node, the tests), the
 * same folder of the built tree.
 */
export function findConsoleAssets(): string | null {
  const candidates = [
    join(__dirname, '..', 'console-app'),
    join(__dirname, '..', '..', 'dist', 'console-app'),
  ];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? null;
}

const logger = new Logger('Console');

/**
 * Serves the built console under /console with serve-static: hashed assets are cached for a
 * year, the page itself never (a new release must reach a reloading browser at once).
 * Anything else under /console is 404 in the API's error shape. The build is looked for again
 * on each visit until found (`npm start` builds it when missing, scripts/ensure-console.mjs),
 * so one built while the service runs is served without a restart.
 */
export function consoleAssets(
  find: () => string | null,
  headers: Record<string, string>,
): (req: Request, res: Response, next: NextFunction) => void {
  let serve: ReturnType<typeof staticFiles> | null = null;
  let told = false;
  return (req, res, next) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return next(
        new ApiError(HttpStatus.METHOD_NOT_ALLOWED, `${req.method} is not served here`, {
          headers: { allow: 'GET, HEAD' },
        }),
      );
    }
    const dir = serve === null ? find() : null;
    if (dir !== null) serve = staticFiles(dir);
    if (serve === null) {
      const message =
        'The console is not built: run npm run build:console (npm start builds it when ' +
        'missing); it is served once built, without a restart';
      // Said once in the log, not with a stack per visit.
      if (!told) logger.warn(message);
      told = true;
      return next(new ApiError(HttpStatus.SERVICE_UNAVAILABLE, message, { quiet: true }));
    }
    // The middleware may be mounted with or without its prefix stripped: serve-static gets
    // the path below /console either way.
    const original = req.url;
    const url = new URL(req.originalUrl, 'http://console.invalid');
    const below = url.pathname.slice(`/${CONSOLE_PATH}`.length);
    // The page itself, named: serve-static would answer /console (no slash) with a redirect.
    req.url = (below === '' || below === '/' ? '/index.html' : below) + url.search;
    serve(req, res, (error?: unknown) => {
      req.url = original;
      next(error ?? new ApiError(HttpStatus.NOT_FOUND, 'Not found'));
    });
  };
}

function staticFiles(dir: string) {
  return express.static(dir, {
    index: false,
    redirect: false,
    fallthrough: true,
    dotfiles: 'ignore',
    setHeaders: (res, path) => {
      res.setHeader(
        'cache-control',
        path.startsWith(join(dir, 'assets')) ? 'public, max-age=31536000, immutable' : 'no-store',
      );
    },
  });
}
