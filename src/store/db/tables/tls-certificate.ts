// Queries of certificates obtained on demand (tls_certificates), pending ACME challenges
// (acme_challenges) and ACME accounts (acme_accounts). Keys arrive here sealed (core/certificates.ts).

import type { Selectable } from 'kysely';
import type { Executor } from '../db.js';
import type { AcmeChallengeTable, TlsCertificateTable } from '../schema.js';

export type TlsCertificateRow = Selectable<TlsCertificateTable>;
export type AcmeChallengeRow = Selectable<AcmeChallengeTable>;

export function findTlsCertificate(db: Executor, name: string): Promise<TlsCertificateRow | undefined> {
  return db.selectFrom('tls_certificates').selectAll().where('name', '=', name).executeTakeFirst();
}

/** Stores a newly issued certificate for `name` (its failures forgotten). */
export async function storeTlsCertificate(
  db: Executor,
  row: { name: string; cert_pem: string; key_sealed: string; not_after: number; issued_at: number },
): Promise<void> {
  const values = {
    ...row,
    last_error: null,
    failures: 0,
    next_attempt_at: null,
    updated_at: row.issued_at,
  };
  await db
    .insertInto('tls_certificates')
    .values(values)
    .onConflict((oc) => oc.column('name').doUpdateSet(values))
    .execute();
}

/** Records a failed issuance of `name`: its error and when the next attempt may be made. */
export async function recordTlsFailure(
  db: Executor,
  name: string,
  error: string,
  failures: number,
  nextAttemptAt: number,
  now: number,
): Promise<void> {
  await db
    .insertInto('tls_certificates')
    .values({
      name,
      cert_pem: null,
      key_sealed: null,
      not_after: null,
      issued_at: null,
      last_error: error,
      failures,
      next_attempt_at: nextAttemptAt,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ last_error: error, failures, next_attempt_at: nextAttemptAt, updated_at: now }),
    )
    .execute();
}

/** Certificates that end before `cutoff` (renewal due) and whose backoff has passed, soonest first. */
export function certificatesDue(db: Executor, cutoff: number, now: number, limit: number) {
  return db
    .selectFrom('tls_certificates')
    .select(['name', 'not_after'])
    .where('not_after', 'is not', null)
    .where('not_after', '<', cutoff)
    .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
    .orderBy('not_after')
    .limit(limit)
    .execute();
}

/** Names that never got a certificate, whose backoff has passed (retried by the sweeper). */
export function failedIssuesDue(db: Executor, now: number, limit: number) {
  return db
    .selectFrom('tls_certificates')
    .select(['name'])
    .where('cert_pem', 'is', null)
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
}

export async function insertAcmeChallenge(db: Executor, row: AcmeChallengeRow): Promise<void> {
  await db
    .insertInto('acme_challenges')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet(row))
    .execute();
}

export function findAcmeChallenge(db: Executor, id: string): Promise<AcmeChallengeRow | undefined> {
  return db.selectFrom('acme_challenges').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function deleteAcmeChallenge(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('acme_challenges').where('id', '=', id).execute();
}

export function findAcmeAccountKey(db: Executor, directoryUrl: string): Promise<string | undefined> {
  return db
    .selectFrom('acme_accounts')
    .select('key_sealed')
    .where('directory_url', '=', directoryUrl)
    .executeTakeFirst()
    .then((r) => r?.key_sealed);
}

/** Keeps the first account key stored for the directory (two nodes racing both read the winner's). */
export async function insertAcmeAccountKey(
  db: Executor,
  directoryUrl: string,
  keySealed: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('acme_accounts')
    .values({ directory_url: directoryUrl, key_sealed: keySealed, created_at: now })
    .onConflict((oc) => oc.column('directory_url').doNothing())
    .execute();
}

/** The domain's certificate is served: sslStatus `active`, no error. */
export async function markDomainCertified(
  db: Executor,
  domain: string,
  now: number,
): Promise<string | undefined> {
  await db
    .updateTable('domains')
    .set({ tls_error: null })
    .where('domain', '=', domain)
    .where('status', '=', 'active')
    .execute();
  // The account whose domain's sslStatus became `active` by this call (undefined when it was already).
  const row = await db
    .updateTable('domains')
    .set({ tls_requested_at: now })
    .where('domain', '=', domain)
    .where('status', '=', 'active')
    .where('tls_requested_at', 'is', null)
    .returning('account_id')
    .executeTakeFirst();
  return row?.account_id;
}

export async function recordDomainTlsError(db: Executor, domain: string, error: string): Promise<void> {
  await db
    .updateTable('domains')
    .set({ tls_error: error })
    .where('domain', '=', domain)
    .where('status', '=', 'active')
    .execute();
}
