// Site variables (spec "Site variables", CONTRACT "Variables, proxy hosts, proxy"): named secrets of one
// site, encrypted at rest with AES-256-GCM under a key derived from SECRETS_KEY. Each value has its own
// random 96-bit nonce; the site and the name are bound as associated data, so a ciphertext copied to
// another site or name does not decrypt. Values are never returned by the API; only the proxy reads them.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Removed, Stored, VariableInfo } from '../api/variables.js';
import type { Db } from '../store/db/db.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { lockSite } from '../store/db/tables/site.js';
import {
  deleteSiteVariable,
  type SiteVariableRow,
  siteVariables,
  upsertSiteVariables,
} from '../store/db/tables/site-variable.js';
import { recordAudit } from './audit.js';
import { ApiError, invalid, notFound } from './errors.js';
import { ownedSite } from './publish.js';
import { sha256Hex } from './secrets.js';

export const MAX_VARIABLES_PER_SITE = 100;
export const MAX_VARIABLE_NAME_CHARS = 64;
export const MAX_VARIABLE_VALUE_BYTES = 8 * 1024;
/** A letter, then letters, digits and underscores (usable as an environment variable's name). */
export const VARIABLE_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_]*$/;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface VariableDeps {
  db: Db;
  clock: { now(): number };
  /** AES-256-GCM key (ServerKeys.variables). */
  variablesKey: Buffer;
}

/** Names the key a value was encrypted with (a fingerprint, not the key), so keys can be rotated. */
export const keyIdOf = (key: Buffer): string => sha256Hex(key).slice(0, 16);

const associatedData = (slug: string, name: string) =>
  Buffer.from(`slipway/site-variable/v1\0${slug}\0${name}`);

export function encryptVariable(key: Buffer, slug: string, name: string, value: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(associatedData(slug, name));
  const sealed = Buffer.concat([nonce, cipher.update(value, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return sealed.toString('base64');
}

/** Throws if the ciphertext was not made for this site and name under this key. */
export function decryptVariable(key: Buffer, slug: string, name: string, ciphertext: string): string {
  const sealed = Buffer.from(ciphertext, 'base64');
  if (sealed.length < NONCE_BYTES + TAG_BYTES) throw new Error('variable ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, NONCE_BYTES));
  decipher.setAAD(associatedData(slug, name));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(sealed.subarray(NONCE_BYTES, sealed.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}

/** Why a variable name is refused, or null. The message names the entry, never a value. */
export function variableNameProblem(name: string): string | null {
  if (name.length === 0) return 'a variable name is empty';
  if (name.length > MAX_VARIABLE_NAME_CHARS)
    return `variable name "${name.slice(0, MAX_VARIABLE_NAME_CHARS)}..." is longer than ${MAX_VARIABLE_NAME_CHARS} characters`;
  if (!VARIABLE_NAME_PATTERN.test(name))
    return `variable name ${JSON.stringify(name)} must start with a letter and contain only letters, digits and underscores`;
  return null;
}

const info = (row: SiteVariableRow): VariableInfo => ({
  name: row.name,
  createdAt: new Date(row.created_at).toISOString(),
  updatedAt: new Date(row.updated_at).toISOString(),
});

/** GET .../variables: names and timestamps only. */
export async function listVariables(
  deps: VariableDeps,
  account: AccountRow,
  slug: string,
): Promise<VariableInfo[]> {
  await ownedSite(deps, account, slug);
  return (await siteVariables(deps.db.kysely, slug)).map(info);
}

/**
 * PUT .../variables: adds or replaces the named variables, keeping the others (CONTRACT). Every entry is
 * checked before anything is stored; one bad entry refuses the whole request, naming it.
 */
export async function putVariables(
  deps: VariableDeps,
  account: AccountRow,
  slug: string,
  body: unknown,
): Promise<Stored> {
  await ownedSite(deps, account, slug);
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw invalid('The body must be a JSON object mapping variable names to secret values.', {
      hint: 'e.g. {"STRIPE_SECRET_KEY": "sk_live_..."}',
    });
  }
  const entries = Object.entries(body as Record<string, unknown>);
  if (entries.length === 0) throw invalid('The body names no variables; send at least one name and value.');
  if (entries.length > MAX_VARIABLES_PER_SITE) {
    throw invalid(
      `At most ${MAX_VARIABLES_PER_SITE} variables per site; this request has ${entries.length}.`,
    );
  }
  for (const [name, value] of entries) {
    const problem = variableNameProblem(name);
    if (problem) throw invalid(`Invalid variable: ${problem}.`);
    if (typeof value !== 'string' || value.length === 0) {
      throw invalid(`Invalid variable ${name}: the value must be a non-empty string.`);
    }
    if (Buffer.byteLength(value, 'utf8') > MAX_VARIABLE_VALUE_BYTES) {
      throw invalid(`Invalid variable ${name}: the value is longer than ${MAX_VARIABLE_VALUE_BYTES} bytes.`);
    }
  }
  const now = deps.clock.now();
  const keyId = keyIdOf(deps.variablesKey);
  const rows: SiteVariableRow[] = entries.map(([name, value]) => ({
    site_slug: slug,
    name,
    key_id: keyId,
    ciphertext: encryptVariable(deps.variablesKey, slug, name, value as string),
    created_at: now,
    updated_at: now,
  }));
  await deps.db.transaction(async (trx) => {
    // The site row first (one lock order), which also serialises concurrent PUTs for the count below.
    await lockSite(trx, slug);
    const existing = new Set((await siteVariables(trx, slug)).map((r) => r.name));
    const total = new Set([...existing, ...rows.map((r) => r.name)]).size;
    if (total > MAX_VARIABLES_PER_SITE) {
      throw invalid(
        `A site can hold at most ${MAX_VARIABLES_PER_SITE} variables; this would make ${total}. Delete some first.`,
      );
    }
    await upsertSiteVariables(trx, rows);
    await recordAudit(trx, {
      accountId: account.id,
      action: 'variable.set',
      target: slug,
      details: { names: rows.map((r) => r.name) },
      at: now,
    });
  });
  return { ok: true, stored: rows.map((r) => r.name) };
}

/** DELETE .../variables/:name. */
export async function deleteVariable(
  deps: VariableDeps,
  account: AccountRow,
  slug: string,
  name: string,
): Promise<Removed> {
  await ownedSite(deps, account, slug);
  await deps.db.transaction(async (trx) => {
    if (!(await deleteSiteVariable(trx, slug, name))) {
      throw notFound(`Site "${slug}" has no variable ${JSON.stringify(name)}.`);
    }
    await recordAudit(trx, {
      accountId: account.id,
      action: 'variable.delete',
      target: slug,
      details: { name },
      at: deps.clock.now(),
    });
  });
  return { ok: true, deleted: name };
}

/** The site's variables in clear, for the proxy only. */
export async function variableValues(
  deps: Pick<VariableDeps, 'db' | 'variablesKey'>,
  slug: string,
): Promise<Map<string, string>> {
  const keyId = keyIdOf(deps.variablesKey);
  const values = new Map<string, string>();
  for (const row of await siteVariables(deps.db.kysely, slug)) {
    if (row.key_id !== keyId) {
      throw new ApiError(
        'INTERNAL_ERROR',
        `Variable ${row.name} of this site was encrypted with another SECRETS_KEY and cannot be read; store it again.`,
      );
    }
    values.set(row.name, decryptVariable(deps.variablesKey, slug, row.name, row.ciphertext));
  }
  return values;
}
