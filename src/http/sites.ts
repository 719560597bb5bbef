// Sites: POST/PUT/GET/DELETE /api/v1/publish[/:slug], finalize, duplicate, claim, metadata,
// GET /api/v1/publishes and versions (spec "Sites", CONTRACT "Versions").

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import * as api from '../api/sites.js';
import { unauthorized } from '../core/errors.js';
import { refuseBlockedPublisher } from '../core/operators.js';
import {
  createSite,
  finalizeSite,
  type PublishDeps,
  type PublishResult,
  updateSite,
} from '../core/publish.js';
import {
  claimSite,
  deleteSite,
  duplicateSite,
  listSites,
  listVersions,
  MAX_LIST_LIMIT,
  restoreVersion,
  siteDetails,
  updateMetadata,
} from '../core/sites.js';
import type { AccountRow } from '../store/db/tables/account.js';
import { refuseOwnerField, requireAccount } from './rate-limit.js';

/** Spec response shape: the anonymous fields sit at the top level. */
function publishReply(r: PublishResult): api.PublishReply {
  if (!r.anonymous) return { slug: r.slug, siteUrl: r.siteUrl, upload: r.upload };
  return {
    slug: r.slug,
    siteUrl: r.siteUrl,
    upload: r.upload,
    claimToken: r.anonymous.claimToken,
    claimUrl: r.anonymous.claimUrl,
    expiresAt: r.anonymous.expiresAt,
    anonymous: true,
    warning: api.ANONYMOUS_WARNING,
  };
}

/** A sent but invalid key is an error, not an anonymous request. */
function optionalAccount(req: FastifyRequest): AccountRow | null {
  if (req.headers.authorization !== undefined && !req.account) throw unauthorized();
  return req.account;
}

export function siteRoutes(deps: PublishDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.route({
      ...api.createSite,
      handler: async (req, reply) => {
        const account = optionalAccount(req);
        if (account === null) await refuseBlockedPublisher(deps.db, req.clientAddress);
        const r = await createSite(deps, account, req.body);
        return reply.code(201).send(publishReply(r));
      },
    });

    app.route({
      ...api.updateSite,
      handler: async (req) => {
        const account = requireAccount(req);
        refuseOwnerField(
          req,
          req.body.viewer !== undefined,
          "`viewer` (the site's title, description and preview image) is metadata and",
        );
        return publishReply(await updateSite(deps, account, req.params.slug, req.body));
      },
    });

    app.route({
      ...api.finalizeSite,
      handler: async (req) => {
        const { versionId, live, alias } = req.body;
        return finalizeSite(deps, optionalAccount(req), req.params.slug, versionId, {
          ...(live === undefined ? {} : { live }),
          ...(alias === undefined ? {} : { alias }),
        });
      },
    });

    app.route({
      ...api.getSite,
      handler: async (req) => siteDetails(deps, requireAccount(req), req.params.slug),
    });

    app.route({
      ...api.listSites,
      handler: async (req) => {
        const account = requireAccount(req);
        const limit =
          req.query.limit === undefined ? undefined : Math.min(Number(req.query.limit), MAX_LIST_LIMIT);
        return listSites(deps, account, { limit, cursor: req.query.cursor });
      },
    });

    app.route({
      ...api.deleteSite,
      handler: async (req) => {
        await deleteSite(deps, requireAccount(req), req.params.slug);
        return { slug: req.params.slug, deleted: true as const };
      },
    });

    app.route({
      ...api.duplicateSite,
      handler: async (req, reply) =>
        reply.code(201).send(await duplicateSite(deps, requireAccount(req), req.params.slug)),
    });

    app.route({
      ...api.claimSite,
      handler: async (req) => claimSite(deps, requireAccount(req), req.params.slug, req.body.claimToken),
    });

    app.route({
      ...api.updateMetadata,
      handler: async (req) => {
        await updateMetadata(deps, requireAccount(req), req.params.slug, req.body);
        return { slug: req.params.slug, updated: true as const };
      },
    });

    app.route({
      ...api.listVersions,
      handler: async (req) => ({ versions: await listVersions(deps, requireAccount(req), req.params.slug) }),
    });

    app.route({
      ...api.restoreVersion,
      handler: async (req) =>
        restoreVersion(deps, requireAccount(req), req.params.slug, req.params.versionId),
    });
  };
}
