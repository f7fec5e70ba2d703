import { readFileSync, renameSync } from 'node:fs';
import { ErrorCodes, GatehopError, writeFileAtomic, type Logger } from '../common/index.js';
import { profilesFileSchema, type ProfilesFile } from './profile.js';

const EMPTY: ProfilesFile = { version: 1, profiles: [], applied: null };

/**
 * The profiles and the one in force, in `<data-dir>/network-profiles.json`. A file that does not
 * read as one is set aside (named in the log) and Gatehop starts with none: it is the user's to
 * look at, never silently overwritten.
 */
export function readProfilesFile(path: string, logger: Logger): ProfilesFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return { ...EMPTY, profiles: [] };
  }
  try {
    return profilesFileSchema.parse(JSON.parse(text));
  } catch (err) {
    const aside = `${path}.invalid-${Date.now()}`;
    try {
      renameSync(path, aside);
    } catch {
      /* left where it is: the next write replaces it */
    }
    logger.warn(
      { event: 'profiles-invalid', path, aside, err: (err as Error).message },
      `network profiles in ${path} are not valid; moved to ${aside}, starting with none`,
    );
    return { ...EMPTY, profiles: [] };
  }
}

export function writeProfilesFile(path: string, file: ProfilesFile): void {
  try {
    writeFileAtomic(path, JSON.stringify(file, null, 1));
  } catch (err) {
    throw new GatehopError(
      ErrorCodes.STORE_FAILED,
      `cannot save network profiles to ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      { cause: err },
    );
  }
}
