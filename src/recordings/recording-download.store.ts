import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { query } from '../database/query';

/** Where one file of an event-only recording is fetched from, and with what. */
export interface RecordingDownload {
  /** The platform's download_url of the file, as the event listed it. */
  downloadUrl: string;
  /** The event's download_token, encrypted ('recording-download-token'). */
  downloadTokenEncrypted: string;
  expiresAt: Date;
}

/**
 * recording_downloads: the platform's download URL and the event's (encrypted) download token
 * per file, so that the links of an event-only deployment work until the token expires. The
 * injection token; PgRecordingDownloadStore is the real one.
 */
export abstract class RecordingDownloadStore {
  /**
   * Keeps the files' download URLs with the token, replacing an older entry of a file (a later
   * event brings a fresher token), and drops the entries whose token has expired.
   */
  abstract save(
    meetingKey: string,
    files: { fileRef: string; downloadUrl: string }[],
    downloadTokenEncrypted: string,
    expiresAt: Date,
  ): Promise<void>;

  /** The entry of one file, expired or not; null when there is none. */
  abstract find(meetingKey: string, fileRef: string): Promise<RecordingDownload | null>;
}

const SAVE_SQL = `
  INSERT INTO recording_downloads
    (meeting_key, file_ref, download_url, download_token_encrypted, expires_at)
  SELECT $1, f.file_ref, f.download_url, $4, $5
  FROM unnest($2::text[], $3::text[]) AS f(file_ref, download_url)
  ON CONFLICT (meeting_key, file_ref) DO UPDATE
    SET download_url = excluded.download_url,
        download_token_encrypted = excluded.download_token_encrypted,
        expires_at = excluded.expires_at
    WHERE excluded.expires_at >= recording_downloads.expires_at`;

// Served by recording_downloads_expires_idx; the tokens are no use once expired.
const PURGE_SQL = `DELETE FROM recording_downloads WHERE expires_at < now()`;

const FIND_SQL = `
  SELECT download_url, download_token_encrypted, expires_at
  FROM recording_downloads WHERE meeting_key = $1 AND file_ref = $2`;

interface DownloadRow {
  download_url: string;
  download_token_encrypted: string;
  expires_at: Date;
}

@Injectable()
export class PgRecordingDownloadStore extends RecordingDownloadStore {
  constructor(@InjectDataSource() private readonly db: DataSource) {
    super();
  }

  async save(
    meetingKey: string,
    files: { fileRef: string; downloadUrl: string }[],
    downloadTokenEncrypted: string,
    expiresAt: Date,
  ): Promise<void> {
    await query(this.db, PURGE_SQL, []);
    if (files.length === 0) return;
    await query(this.db, SAVE_SQL, [
      meetingKey,
      files.map((f) => f.fileRef),
      files.map((f) => f.downloadUrl),
      downloadTokenEncrypted,
      expiresAt,
    ]);
  }

  async find(meetingKey: string, fileRef: string): Promise<RecordingDownload | null> {
    const [row] = await query<DownloadRow>(this.db, FIND_SQL, [meetingKey, fileRef]);
    if (!row) return null;
    return {
      downloadUrl: row.download_url,
      downloadTokenEncrypted: row.download_token_encrypted,
      expiresAt: row.expires_at,
    };
  }
}
