import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One file of an event-only recording: the platform's download URL and the recording event's
 * download token (encrypted), usable until `expiresAt` (RecordingDownloadStore reads and
 * writes it with its own SQL; the entity states the table for the schema check).
 */
@Index('recording_downloads_expires_idx', ['expiresAt'])
@Entity('recording_downloads')
export class RecordingDownloadEntity {
  /** The meeting's uuid (else its id), as in the download route. */
  @PrimaryColumn({ name: 'meeting_key', type: 'text' })
  meetingKey: string;

  /** The file's id, or for a file without one the name fileRef derives. */
  @PrimaryColumn({ name: 'file_ref', type: 'text' })
  fileRef: string;

  @Column({ name: 'download_url', type: 'text' })
  downloadUrl: string;

  @Column({ name: 'download_token_encrypted', type: 'text' })
  downloadTokenEncrypted: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;
}
