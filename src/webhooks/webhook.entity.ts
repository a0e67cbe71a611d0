import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';
import { Subscription } from './subscription-events';

// Indexes the migration creates in forms TypeORM cannot describe (GIN, partial, DESC);
// synchronize: false keeps migration:generate from proposing to drop them.
@Index('webhooks_active_events_idx', { synchronize: false })
@Index('webhooks_owner_page_idx', { synchronize: false })
@Entity('webhooks')
export class WebhookEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'owner_client_id', type: 'text' })
  ownerClientId: string;

  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'text', array: true })
  events: Subscription[];

  /** AES-256-GCM ciphertext (see SecretCipherService); never leaves the service. */
  @Column({ name: 'secret_encrypted', type: 'text' })
  secretEncrypted: string;

  @Column({ name: 'secret_hint', type: 'text' })
  secretHint: string;

  @Column({ type: 'boolean', default: true })
  active: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
