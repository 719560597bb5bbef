// The secret scanner on real front-end bundles (issue 21): every file of the real-bundle set
// (bench/lib/real-bundles.ts: the libraries and the editors and renderers sites ship, from node_modules)
// must give no finding, since a false positive stops a person's publish with no way round it.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { resolveRealBundles } from '../../bench/lib/real-bundles.js';
import { REPO_ROOT } from '../../bench/lib/service.js';
import { scanStream } from '../../src/core/scan/scanner.js';

const CHUNK_BYTES = 64 * 1024;

function* chunks(bytes: Buffer): Generator<Buffer> {
  for (let at = 0; at < bytes.length; at += CHUNK_BYTES) yield bytes.subarray(at, at + CHUNK_BYTES);
}

describe('scanStream on the real-bundle set', () => {
  for (const bundle of resolveRealBundles()) {
    test(`scanStream finds nothing in ${bundle.name} (${bundle.files.length} files)`, async () => {
      assert.deepEqual(bundle.missing, [], `${bundle.name}: not in node_modules (run npm ci)`);
      const findings: string[] = [];
      for (const file of bundle.files) {
        const bytes = readFileSync(join(REPO_ROOT, 'node_modules', file));
        for (const f of await scanStream(chunks(bytes))) {
          findings.push(`node_modules/${file}:${f.line} ${f.type} (${f.variableName})`);
        }
      }
      assert.deepEqual(findings, []);
    });
  }
});
