// Archive deploys: POST /api/v1/publish/:slug/archive and POST /api/v1/publish/archive (CONTRACT "Archive
// deploys"). The body is not parsed: the handler streams it (through the pace rule, src/http/request-body.ts)
// into core/archive.ts. No JSON body limit applies; the archive's own limit does (core/archive.ts).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as api from '../api/archive.js';
import { ANONYMOUS_WARNING } from '../api/sites.js';
import { ARCHIVE_MEDIA_TYPES, deployArchive } from '../core/archive.js';
import { invalid, unauthorized } from '../core/errors.js';
import { refuseBlockedPublisher } from '../core/operators.js';
import type { FinalizeOptions, PublishDeps } from '../core/publish.js';
import { accountForAuthorization } from '../core/signin.js';
import { deployTokenCaller } from '../core/tokens.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { requireAccount } from './rate-limit.js';

/**
 * The request's key or deploy token, checked again after the archive has arrived (up to an hour later):
 * revoking a token or regenerating a key stops it "at once" (docs/deploy-tokens.md), so an archive still
 * on its way then publishes nothing (401), as the three-step flow's finalize would refuse it.
 */
function recheckCaller(deps: PublishDeps, req: FastifyRequest): () => Promise<void> {
  return async () => {
    const header = req.headers.authorization;
    if (header === undefined || req.account === null) return; // anonymous
    const now = deps.clock.now();
    const still = req.deployToken
      ? (await deployTokenCaller(deps.db, header, now))?.token.id === req.deployToken.id
      : (await accountForAuthorization(deps.db, header, now))?.id === req.account.id;
    if (!still) {
      throw unauthorized(
        'The key or deploy token of this request was revoked or expired while the archive was being sent; nothing was published.',
      );
    }
  };
}

/** A sent but invalid key is an error, not an anonymous request. */
function optionalAccount(req: FastifyRequest): AccountRow | null {
  if (req.headers.authorization !== undefined && !req.account) throw unauthorized();
  return req.account;
}

/** The body, after the content type is checked: a gzip stream, not empty. */
function archiveBody(req: FastifyRequest): NodeJS.ReadableStream {
  const type = (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (!ARCHIVE_MEDIA_TYPES.includes(type)) {
    throw invalid(
      `Send the archive as a gzip-compressed tar with Content-Type: application/gzip${type === '' ? '' : ` (not ${JSON.stringify(type.slice(0, 80))})`}.`,
      { status: 415, hint: 'curl --data-binary @site.tar.gz -H "Content-Type: application/gzip" ...' },
    );
  }
  const length = req.headers['content-length'];
  if (length === '0' || (length === undefined && req.headers['transfer-encoding'] === undefined)) {
    throw invalid('The request has no body: send the archive.');
  }
  return (req.body as NodeJS.ReadableStream | undefined) ?? req.raw;
}

function finalizeOptions(query: api.ArchiveQuery): FinalizeOptions {
  return {
    ...(query.live !== undefined ? { live: query.live === 'true' } : {}),
    ...(query.alias !== undefined ? { alias: query.alias } : {}),
  };
}

export function archiveRoutes(deps: PublishDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    // The body is the archive: no parser, no JSON limit; any content type reaches the handler, which
    // answers a wrong one with the spec's error body.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

    app.route({
      ...api.deployArchive,
      handler: async (req) => {
        const account = requireAccount(req);
        const body = archiveBody(req);
        return deployArchive(
          deps,
          account,
          req.params.slug,
          {
            body: body as AsyncIterable<Uint8Array>,
            contentLength: req.headers['content-length'],
            stillAuthorized: recheckCaller(deps, req),
          },
          finalizeOptions(req.query),
        );
      },
    });

    app.route({
      ...api.createFromArchive,
      handler: async (req, reply) => {
        const account = optionalAccount(req);
        if (account === null) await refuseBlockedPublisher(deps.db, req.clientAddress);
        const body = archiveBody(req);
        const result = await deployArchive(
          deps,
          account,
          null,
          {
            body: body as AsyncIterable<Uint8Array>,
            contentLength: req.headers['content-length'],
            stillAuthorized: recheckCaller(deps, req),
          },
          finalizeOptions(req.query),
        );
        return reply.code(201).send(result.anonymous ? { ...result, warning: ANONYMOUS_WARNING } : result);
      },
    });
  };
}
