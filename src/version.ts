import { readFileSync } from 'node:fs';

/** The package version, read once from package.json (the one place it is written). */
export const VERSION: string = (
  JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/**
 * The release's date, time and build number, set when a release is cut. With VERSION it makes the string the
 * XML interface's `version` service answers: `<dotted_version>-<date>-<time>_<digits>`.
 */
export const BUILD = '20261121-0900_5';
export const VERSION_STRING = `${VERSION}-${BUILD}`;
