// The secret scan of a version at finalize (spec "finalize", SECRET_DETECTED): every browser-delivered text
// file is checked, each blob once ever (results are kept per hash and scanner version; an upload usually
// scans its bytes as they stream in, so finalize mostly reads results). A finding refuses the finalize
// with the spec's detectedSecrets and remediation; the pending version stays for a retry.

import type { BlobStore } from '../../store/blob/types.js';
import type { Db } from '../../store/db/db.js';
import type { BlobScanTable } from '../../store/db/schema.js';
import { findBlobScans, saveBlobScan } from '../../store/db/tables/blob-scan.js';
import type { VersionFileRow } from '../../store/db/tables/version.js';
import { ApiError } from '../errors.js';
import type { FinalizeCheck } from '../publish.js';
import { type Finding, isScannable, SCANNER_VERSION, scanStream } from './scanner.js';

export interface SiteScanDeps {
  db: Db;
  blobs: BlobStore;
  clock: { now(): number };
  /** `proxyEnabled`: SECRET_DETECTED says when the proxy its steps lead to is switched off here. */
  config: { baseUrl: string; proxyEnabled: boolean };
}

/** Blobs scanned at once at finalize when no upload scanned them (each is CPU-bound; 2 cores here). */
const SCAN_CONCURRENCY = 2;

/** A blob's result as stored: no finalize scans these bytes again (an upload stores it with its bytes). */
export function scanRecord(hash: string, findings: Finding[], now: number): BlobScanTable {
  return { hash, scanner_version: SCANNER_VERSION, findings: JSON.stringify(findings), scanned_at: now };
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
      await saveBlobScan(deps.db.kysely, scanRecord(hash, findings, deps.clock.now()));
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

/**
 * AWS's APIs live on many hosts (`<service>.<region>.amazonaws.com`); the rule cannot tell which one a page
 * calls, so the suggestion is an example of that form and the steps say so.
 */
export const AWS_EXAMPLE_HOST = 's3.us-east-1.amazonaws.com';
const EXAMPLE_HOSTS: Record<string, string[]> = {
  aws_access_key_id: [AWS_EXAMPLE_HOST],
  aws_secret_access_key: [AWS_EXAMPLE_HOST],
};

/** A finding as SECRET_DETECTED reports it (hosts: the rule's, else an example host for its kind). */
export function detectedOf(path: string, finding: Finding): DetectedSecret {
  return {
    path,
    type: finding.type,
    line: finding.line,
    suggestedVariableName: finding.variableName,
    suggestedProxyHosts:
      finding.proxyHosts.length > 0 ? [...finding.proxyHosts] : [...(EXAMPLE_HOSTS[finding.type] ?? [])],
  };
}

/** The finalize check the publish lifecycle runs before a version goes live. */
export function secretScanCheck(deps: SiteScanDeps): FinalizeCheck {
  return async ({ slug, files }) => {
    const byHash = await findingsByHash(deps, files);
    const detected: DetectedSecret[] = [];
    for (const f of files) {
      for (const finding of (f.hash && byHash.get(f.hash)) || []) detected.push(detectedOf(f.path, finding));
    }
    if (detected.length > 0) throw secretDetected(deps.config, slug, detected);
  };
}

const unique = (values: string[]) => [...new Set(values)];

/** Rewrite steps listed one per file and variable up to this many; the rest are summed up in one step. */
const MAX_REWRITE_STEPS = 20;

export const PROXY_OFF_MESSAGE =
  'The site proxy is switched off on this server (PROXY_ENABLED=false): the operator of the server must ' +
  'set PROXY_ENABLED=true and restart it (self-hosting: restart with PROXY_ENABLED=true).';

/**
 * 400 SECRET_DETECTED with the spec's fields (and `remediation.proxyEnabled`). The secret values are not in
 * it, not even in part. One rewrite step per file and variable, naming both, so each secret's step names
 * its own variable; asking the owner is the first step and the only one that says so.
 */
export function secretDetected(
  config: { baseUrl: string; proxyEnabled: boolean },
  slug: string,
  detected: DetectedSecret[],
): ApiError {
  const { baseUrl, proxyEnabled } = config;
  const variableNames = unique(detected.map((d) => d.suggestedVariableName));
  const proxyHosts = unique(detected.flatMap((d) => d.suggestedProxyHosts));
  const paths = unique(detected.map((d) => d.path));
  const site = `${baseUrl}/api/v1/publish/${slug}`;
  const proxy = `${baseUrl}/api/v1/proxy/${slug}`;
  const example = Object.fromEntries(variableNames.map((n) => [n, '<the secret value>']));
  const exampleHosts = proxyHosts.filter((h) => Object.values(EXAMPLE_HOSTS).some((l) => l.includes(h)));

  // One rewrite per (file, variable), with the lines where that variable's secret sits.
  const rewrites = new Map<string, { path: string; name: string; hosts: string[]; lines: number[] }>();
  for (const d of detected) {
    const key = JSON.stringify([d.path, d.suggestedVariableName]);
    const entry = rewrites.get(key) ?? { path: d.path, name: d.suggestedVariableName, hosts: [], lines: [] };
    entry.lines.push(d.line);
    entry.hosts = unique([...entry.hosts, ...d.suggestedProxyHosts]);
    rewrites.set(key, entry);
  }
  const rewriteSteps = [...rewrites.values()].slice(0, MAX_REWRITE_STEPS).map((r) => {
    const host = r.hosts[0] ?? '<api host>';
    const lines = unique(r.lines.map(String)).join(', ');
    return `In ${r.path} (published copy only; line${r.lines.length === 1 ? '' : 's'} ${lines}): remove the ${r.name} value and call the API through POST ${proxy} with {"url": "https://${host}/...", "method": "...", "headers": {...}, "body": "..."}, writing {{${r.name}}} where the secret was; the proxy fills it in server side.`;
  });
  if (rewrites.size > MAX_REWRITE_STEPS) {
    rewriteSteps.push(
      `Do the same for the other ${rewrites.size - MAX_REWRITE_STEPS} file/variable pairs listed in detectedSecrets, each with its own suggestedVariableName.`,
    );
  }

  const steps = [
    'Ask the site owner for permission before changing anything; if they refuse, do not publish the site.',
    ...(proxyEnabled
      ? []
      : [
          `${PROXY_OFF_MESSAGE} Until then the proxy answers 403 FORBIDDEN to the page; still remove the secrets from the published copy.`,
        ]),
    `Store each secret as a site variable (owner's API key): PUT ${site}/variables with ${JSON.stringify(example)}.`,
    proxyHosts.length > 0
      ? `Approve the API hosts the page calls: PUT ${site}/proxy-hosts with ${JSON.stringify({ hosts: proxyHosts })}${
          exampleHosts.length > 0
            ? ` (${exampleHosts.join(', ')} is an example: AWS hosts are <service>.<region>.amazonaws.com; name the ones the page calls)`
            : ''
        }.`
      : `Approve the HTTPS API host the page calls: PUT ${site}/proxy-hosts with {"hosts": ["<api host>"]}.`,
    ...rewriteSteps,
    `Upload the changed files (PUT ${site} with the new manifest; unchanged files are skipped by hash) and finalize again.`,
  ];
  const count = detected.length;
  return new ApiError(
    'SECRET_DETECTED',
    `Publishing stopped: ${count} exposed secret${count === 1 ? '' : 's'} found in ${paths.length} file${paths.length === 1 ? '' : 's'} (${detected
      .slice(0, 5)
      .map((d) => `${d.type} in ${d.path} line ${d.line}`)
      .join(
        '; ',
      )}${count > 5 ? '; ...' : ''}). The site did not go live.${proxyEnabled ? '' : ` ${PROXY_OFF_MESSAGE}`}`,
    {
      hint: 'Move the secrets into site variables and call their APIs through the site proxy (see remediation.steps).',
      extra: {
        detectedSecrets: detected,
        remediation: {
          suggestedVariableNames: variableNames,
          suggestedProxyHosts: proxyHosts,
          steps,
          proxyEnabled,
        },
      },
    },
  );
}
