import { Controller, Get, Logger, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
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
@ApiTags('accounts')
@Controller('zoom/oauth')
export class OAuthCallbackController {
  private readonly logger = new Logger(OAuthCallbackController.name);

  constructor(private readonly flow: InstallFlow) {}

  @Get('callback')
  @ApiOperation({
    summary: 'Where the platform sends the installing person (public)',
    description:
      'Called by the browser of the person installing the app, not by clients: exchanges the ' +
      'code, learns the account from the platform and stores the installation for the client ' +
      'that started the install (docs/accounts.md). Answers an HTML page either way.',
  })
  @ApiProduces('text/html')
  @ApiQuery({ name: 'state', required: false, description: 'The state of the install URL' })
  @ApiQuery({ name: 'code', required: false, description: "The platform's authorization code" })
  @ApiQuery({ name: 'error', required: false, description: 'Set by the platform when refused' })
  @ApiResponse({
    status: 200,
    description: 'A page saying which account was installed',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 400,
    description:
      'A page naming the problem (missing, unknown, used or expired state; the platform ' +
      'refused; the exchange failed); nothing stored',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
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
