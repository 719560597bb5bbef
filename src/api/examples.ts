// Values the operations' examples share (one site, one version, one moment), so the examples of the
// whole document tell one consistent story.

import { versionLabel as labelOf } from '../shared/preview-names.js';
import { type ExampleContext, errorExample } from './common.js';

export const slug = 'mellow-fern-vjn3ru';
export const versionId = 'ver_vQl5PqpRwhz6RbutQ8KuVQ';
export const previousVersionId = 'ver_k31-KdArE_QuvHal2oJDeg';
/** Their labels (preview hosts `<slug>--<label>`). */
export const versionLabel = labelOf(versionId);
export const previousVersionLabel = labelOf(previousVersionId);
export const at = '2026-11-24T09:30:00.000Z';
export const later = '2026-11-25T09:30:00.000Z';
export const hash = 'b5d4045c3f466fa91fe2cc6abe79232a1a57cdf104f7a26e716e0a1e2789df78';
export const apiKey = 'svc_live_995ae26666e8074a088f08d2a5f7cf56';
export const claimToken = 'clm_a61b269e23edbaf86ee763152982d5ab59331ee6cdd90d99';
export const domain = 'www.example.com';

export const siteUrl = (c: ExampleContext, name = slug) => `${c.scheme}://${name}.${c.siteDomain}/`;

export const unauthorized = errorExample(
  'UNAUTHORIZED',
  401,
  'Missing or invalid API key',
  'Send Authorization: Bearer <API key>; sign in with /api/auth/agent/request-code to get one.',
);
export const siteMissing = errorExample('NOT_FOUND', 404, `Site "${slug}" not found`);
