// One table classifies media types (src/shared/rules/media-types.ts): the charset rule, compression, the
// one-file viewer and the secret scan read it, so they cannot disagree on what a type is.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isScannable } from '../../../src/core/scan/scanner.js';
import { contentTypeHeader } from '../../../src/shared/rules/content-type.js';
import { isCompressible, viewerKind } from '../../../src/shared/rules/media-types.js';

/** Types a site ships, and the families the rules name. */
const TYPES = [
  'text/html',
  'text/css',
  'text/plain',
  'text/csv',
  'text/markdown',
  'application/javascript',
  'application/x-javascript',
  'application/ecmascript',
  'application/json',
  'application/manifest+json',
  'application/ld+json',
  'application/geo+json',
  'application/vnd.api+json',
  'application/xml',
  'application/xhtml+xml',
  'application/rss+xml',
  'application/atom+xml',
  'application/soap+xml',
  'model/gltf+json',
  'image/svg+xml',
  'image/png',
  'image/webp',
  'video/mp4',
  'audio/mpeg',
  'application/pdf',
  'application/wasm',
  'application/zip',
  'application/octet-stream',
  'font/woff2',
  'font/ttf',
];

test('the charset rule, the viewer, compression and the secret scan agree on which types are text', () => {
  const disagreements: string[] = [];
  for (const type of TYPES) {
    const charset = contentTypeHeader(type).endsWith('; charset=utf-8');
    const scanned = isScannable('file', type);
    const view = viewerKind(type);
    // Text is shown as text, except an image that is text (SVG), which is shown as an image.
    const viewedAsText = view === 'text' || (view === 'image' && charset);
    if (charset !== scanned) disagreements.push(`${type}: charset ${charset}, scanned ${scanned}`);
    if (charset !== viewedAsText) disagreements.push(`${type}: charset ${charset}, viewer ${view}`);
    if (charset && !isCompressible(type)) disagreements.push(`${type}: text but not compressed`);
  }
  assert.deepEqual(disagreements, []);
});
