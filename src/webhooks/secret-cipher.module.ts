import { Global, Module } from '@nestjs/common';
import { SecretCipherService } from './secret-cipher.service';

/**
 * The one SecretCipherService of the process, global so that the API modules and the worker
 * modules share it without importing WebhooksModule (which would bring its routes into workers).
 */
@Global()
@Module({
  providers: [SecretCipherService],
  exports: [SecretCipherService],
})
export class SecretCipherModule {}
