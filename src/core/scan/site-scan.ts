// The secret scan of a version at finalize (spec "finalize", SECRET_DETECTED): every browser-delivered text
// file is checked, each blob once ever (results are kept per hash and scanner version; an upload usually
// scans its bytes as they stream in, so finalize mostly reads results). A finding refuses the finalize
// with the spec's detectedSecrets and remediation; the pending version stays for a retry.

import type { BlobStore } from '../../store/blob/types.js';
import type { Db } from '../../store/db/db.js';
import { findBlobScans, saveBlobScan } from '../../store/db/tables/blob-scan.js';
import type { VersionFileRow } from '../../store/db/tables/version.js';
import { ApiError } from '../errors.js';
import type { FinalizeCheck } from '../publish.js';
import { type Finding, isScannable, SCANNER_VERSION, scanStream } from './scanner.js';

export interface SiteScanDeps {
  db: Db;
  blobs: BlobStore;
  clock: { now(): number };
  config: { baseUrl: string };
}

/** Blobs scanned at once at finalize when no upload scanned them (each is CPU-bound; 2 cores here). */
const SCAN_CONCURRENCY = 2;

/** Stores a blob's result so no finalize scans these bytes again (upload-time scans call this too). */
export async function rememberScan(deps: SiteScanDeps, hash: string, findings: Finding[]): Promise<void> {
  await saveBlobScan(deps.db.kysely, {
    hash,
    scanner_version: SCANNER_VERSION,
    findings: JSON.stringify(findings),
    scanned_at: deps.clock.now(),
  });
}

/** Whether the current scanner has a result for these bytes. */
export async function isScanned(deps: Pick<SiteScanDeps, 'db'>, hash: string): Promise<boolean> {
  return (await findBlobScans(deps.db.kysely, SCANNER_VERSION, [hash])).size > 0;
}

/** Findings per blob hash of the version's scannable files: stored results, and a scan of the rest. */
async function findingsByHash(deps: SiteScanDeps, files: VersionFileRow[]): Promise<Map<string, Finding[]>> {
  const hashes = [
    ...new Set(
      files.filter((f) => f.hash !== null && isScannable(f.path, f.content_type)).map((f) => f.hash!),
    ),
  ];
  const stored = await findBlobScans(deps.db.kysely, SCANNER_VERSION, hashes);
  const result = new Map<string, Finding[]>();
  for (const [hash, json] of stored) result.set(hash, JSON.parse(json) as Finding[]);
  const missing = hashes.filter((h) => !stored.has(h));
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const hash = missing[next++]!;
      const findings = await scanStream((await deps.blobs.get(hash)) as AsyncIterable<Uint8Array>);
      await rememberScan(deps, hash, findings);
      result.set(hash, findings);
    }
  };
  await Promise.all(Array.from({ length: Math.min(SCAN_CONCURRENCY, missing.length) }, worker));
  return result;
}

export interface DetectedSecret {
  path: string;
  type: string;
  line: number;
  suggestedVariableName: string;
  suggestedProxyHosts: string[];
}

/** The finalize check the publish lifecycle runs before a version goes live. */
export function secretScanCheck(deps: SiteScanDeps): FinalizeCheck {
  return async ({ slug, files }) => {
    const byHash = await findingsByHash(deps, files);
    const detected: DetectedSecret[] = [];
    for (const f of files) {
      for (const finding of (f.hash && byHash.get(f.hash)) || []) {
        detected.push({
          path: f.path,
          type: finding.type,
          line: finding.line,
          suggestedVariableName: finding.variableName,
          suggestedProxyHosts: [...finding.proxyHosts],
        });
      }
    }
    if (detected.length > 0) throw secretDetected(deps.config.baseUrl, slug, detected);
  };
}

const unique = (values: string[]) => [...new Set(values)];

/** 400 SECRET_DETECTED with the spec's fields. The secret values are not in it, not even in part. */
export function secretDetected(baseUrl: string, slug: string, detected: DetectedSecret[]): ApiError {
  const variableNames = unique(detected.map((d) => d.suggestedVariableName));
  const proxyHosts = unique(detected.flatMap((d) => d.suggestedProxyHosts));
  const paths = unique(detected.map((d) => d.path));
  const site = `${baseUrl}/api/v1/publish/${slug}`;
  const example = Object.fromEntries(variableNames.map((n) => [n, '<the secret value>']));
  const steps = [
    'Ask the site owner for permission before changing anything; if they refuse, do not publish the site.',
    `Store each secret as a site variable (owner's API key): PUT ${site}/variables with ${JSON.stringify(example)}.`,
    proxyHosts.length > 0
      ? `Approve the API hosts the page calls: PUT ${site}/proxy-hosts with ${JSON.stringify({ hosts: proxyHosts })}.`
      : 'Approve the HTTPS API host the page calls: PUT ' +
        site +
        '/proxy-hosts with {"hosts": ["<api host>"]}.',
    `In the published copy only (${paths.join(', ')}), remove the secret and call the API through POST ${baseUrl}/api/v1/proxy/${slug} with {"url": "https://<api host>/...", "method": "...", "headers": {...}, "body": "..."}, writing {{${variableNames[0]}}} where the secret was; the proxy fills it in server side.`,
    `Upload the changed files (PUT ${site} with the new manifest; unchanged files are skipped by hash) and finalize again.`,
  ];
  const count = detected.length;
  return new ApiError(
    'SECRET_DETECTED',
    `Publishing stopped: ${count} exposed secret${count === 1 ? '' : 's'} found in ${paths.length} file${paths.length === 1 ? '' : 's'} (${detected
      .slice(0, 5)
      .map((d) => `${d.type} in ${d.path} line ${d.line}`)
      .join('; ')}${count > 5 ? '; ...' : ''}). The site did not go live.`,
    {
      hint: 'Move the secrets into site variables and call their APIs through the site proxy (see remediation.steps).',
      extra: {
        detectedSecrets: detected,
        remediation: { suggestedVariableNames: variableNames, suggestedProxyHosts: proxyHosts, steps },
      },
    },
  );
}
