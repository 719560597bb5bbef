// The names after `--` in a preview host `<slug>--<name>.<site domain>` (CONTRACT "Previews and aliases"):
// a version's label, the short, stable, lowercase id derived from the version id alone (so the version
// row's indexed `label` column, written by tables/version.ts and by migration 011 for older versions, and
// the URLs the API shows always agree), or an alias name its owner chose. Read by the host rule
// (core/hosts.ts) and the alias rules (core/aliases.ts).

import { createHash } from 'node:crypto';

/** Characters of a label: a digit, then letters or digits (about 50 bits). */
export const VERSION_LABEL_CHARS = 10;
const TAIL = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * `versionId`'s label: 10 characters of SHA-256(id), the first a digit. Alias names start with a letter
 * (ALIAS_NAME_RE), so a name after `--` is a label or an alias by its first character, never both.
 * Unique within a site in practice (50 bits; lookups are by site and label).
 */
export function versionLabel(versionId: string): string {
  const digest = createHash('sha256').update(versionId).digest();
  let label = String(digest[0]! % 10);
  for (let i = 1; i < VERSION_LABEL_CHARS; i++) label += TAIL.charAt(digest[i]! % TAIL.length);
  return label;
}

/** Whether `name` has a label's form (so it is looked up as a label, not as an alias). */
export const isVersionLabel = (name: string): boolean => /^[0-9][a-z0-9]{9}$/.test(name);

/** The separator of a preview host's label: slugs, alias names and new handles never contain it. */
export const PREVIEW_SEPARATOR = '--';
export const ALIAS_NAME_MAX_CHARS = 30;
/** 1-30 of a-z0-9-, starting with a letter, not ending with `-`, no `--` (CONTRACT). */
export const ALIAS_NAME_RE = /^[a-z](?:[a-z0-9-]{0,28}[a-z0-9])?$/;

export const isAliasName = (name: string): boolean => ALIAS_NAME_RE.test(name) && !name.includes('--');
