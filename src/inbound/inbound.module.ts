import { Module } from '@nestjs/common';
import { SecretCipherService } from '../webhooks/secret-cipher.service';
import { InboundStoreModule } from './inbound-store.module';
import { InboundController } from './inbound.controller';
import { InboundService } from './inbound.service';

/** POST /zoom/events: verify, answer URL validation, store and queue (API role). */
@Module({
  imports: [InboundStoreModule],
  controllers: [InboundController],
  providers: [InboundService, SecretCipherService],
})
export class InboundModule {}
