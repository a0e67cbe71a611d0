import { ApiProperty } from '@nestjs/swagger';
import { INSTALLATION_STATUSES, Installation, InstallationStatus } from '../installation.store';

/** Answer of POST /api/platform/installs. */
export class InstallResponse {
  @ApiProperty({
    description:
      'Where the person installing the app goes: the platform asks them to authorize it and ' +
      'sends their browser back to ZOOM_APP_REDIRECT_URL. Single use.',
    example:
      'https://zoom.us/oauth/authorize?response_type=code&client_id=AbCdEf&redirect_uri=' +
      'https%3A%2F%2Fbridge.example.com%2Fzoom%2Foauth%2Fcallback&state=q1w2e3&' +
      'code_challenge=Xy9&code_challenge_method=S256',
  })
  install_url: string;

  @ApiProperty({
    description: 'When the URL stops working (10 minutes)',
    example: '2026-01-01T10:10:00.000Z',
    format: 'date-time',
  })
  expires_at: string;
}

/** One installed platform account, never with a token. */
export class AccountResponse {
  @ApiProperty({ example: 'AAAAAAAAAAAAAAAAAAAAAA', description: 'The platform account' })
  account_id: string;

  @ApiProperty({
    enum: INSTALLATION_STATUSES,
    example: 'active',
    description:
      '`active`; `needs_reinstall` after the platform refused to renew its tokens; `revoked` ' +
      'after it uninstalled the app or was removed',
  })
  status: InstallationStatus;

  @ApiProperty({ example: 'crm', description: 'The API client that installed it' })
  installed_by: string;

  @ApiProperty({
    example: '2026-01-01T10:00:00.000Z',
    format: 'date-time',
    description: 'When it was (last) installed',
  })
  installed_at: string;

  @ApiProperty({
    example: 'meeting:read:meeting user:read:user',
    description: 'The scopes the platform granted, space separated',
  })
  scopes: string;
}

export class AccountListResponse {
  @ApiProperty({ type: [AccountResponse] })
  data: AccountResponse[];
}

export const accountResponse = (installation: Installation): AccountResponse => ({
  account_id: installation.accountId,
  status: installation.status,
  installed_by: installation.installedBy,
  installed_at: installation.installedAt.toISOString(),
  scopes: installation.scopes,
});
