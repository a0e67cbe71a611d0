import { Controller, Get, Logger, Query, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { CallbackRefused, InstallFlow } from './install-flow.service';

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

/** A short page for the person who installed (or tried to). */
function page(title: string, message: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>' +
    escapeHtml(title) +
    '</title></head><body><h1>' +
    escapeHtml(title) +
    '</h1><p>' +
    escapeHtml(message) +
    '</p></body></html>'
  );
}

/**
 * GET /zoom/oauth/callback (public, docs/accounts.md#installing): where the platform sends the
 * installing person's browser. A page either way, never JSON; the query (code, state) is never
 * logged.
 */
@ApiExcludeController()
@Controller('zoom/oauth')
export class OAuthCallbackController {
  private readonly logger = new Logger(OAuthCallbackController.name);

  constructor(private readonly flow: InstallFlow) {}

  @Get('callback')
  async callback(@Query() query: Record<string, unknown>, @Res() res: Response): Promise<void> {
    res.setHeader('cache-control', 'no-store');
    res.setHeader('content-security-policy', "default-src 'none'");
    res.type('html');
    try {
      const installed = await this.flow.complete(query);
      res
        .status(200)
        .send(
          page(
            'Account installed',
            `The platform account ${installed.accountId} is now connected to the bridge. ` +
              'You can close this page.',
          ),
        );
    } catch (error) {
      if (!(error instanceof CallbackRefused)) throw error;
      this.logger.warn(`install callback refused: ${error.problem}`);
      res.status(400).send(page('Install failed', error.problem));
    }
  }
}
