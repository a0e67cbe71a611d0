import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** What `meb login` keeps per profile: where the service is and a token for it. */
export interface Profile {
  url: string;
  client_id: string;
  access_token: string;
  /** ISO 8601; the token is not offered after it. */
  expires_at: string;
  scope: string;
}

interface ProfileFile {
  profiles: Record<string, Profile>;
}

/**
 * The profiles file: `$XDG_CONFIG_HOME/meb/profiles.json` (default `~/.config/meb`), mode 0600
 * because it holds bearer tokens. It holds no client secret: a token that runs out asks for a
 * new `meb login`.
 */
export class ProfileStore {
  constructor(readonly file: string) {}

  /** The store in the user's config directory, from the environment (`configHome`). */
  static forUser(configHome: string | undefined): ProfileStore {
    const base = configHome && configHome.length > 0 ? configHome : join(homedir(), '.config');
    return new ProfileStore(join(base, 'meb', 'profiles.json'));
  }

  private read(): ProfileFile {
    try {
      const parsed = JSON.parse(readFileSync(this.file, 'utf8')) as Partial<ProfileFile>;
      return { profiles: parsed.profiles ?? {} };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
      throw new Error(
        `${this.file} cannot be read (${(error as Error).message}): delete it and log in again`,
      );
    }
  }

  get(name: string): Profile | undefined {
    return this.read().profiles[name];
  }

  set(name: string, profile: Profile | undefined): void {
    const data = this.read();
    if (profile) data.profiles[name] = profile;
    else delete data.profiles[name];
    mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
    // Written beside and renamed: a reader never sees half a file, and the token is never
    // readable by others, not even for a moment (mode set at creation).
    const temp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(temp, `${JSON.stringify(data, null, 2)}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, this.file);
  }
}
