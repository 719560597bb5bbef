// The landing and reference pages of the BASE_URL host (CONTRACT "Web pages"): `/`, `/llms.txt` for
// agents, `/docs` (the API reference rendered from /api/openapi.json by swagger-ui, served locally), and
// the pages' hashed stylesheet and script. Nothing here needs a session or takes a form.

import swaggerUi from '@fastify/swagger-ui';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { APP_CSS, FAVICON_PATH, FAVICON_SVG, html, layout, type SafeHtml } from '../../shared/html.js';
import { APP_JS } from './app-script.js';
import { abuseContactHtml, hashedAsset, NAV, SCRIPT_PATH, STYLESHEET_PATH, sendPage } from './page.js';

/** Where @fastify/swagger-ui serves swagger-ui's files (only its static/ part is used). */
const SWAGGER_UI_PREFIX = '/docs/ui';

/** Starts swagger-ui on /api/openapi.json: the base layout (no top bar), no call to an online validator. */
const DOCS_JS = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/api/openapi.json',
    dom_id: '#swagger-ui',
    layout: 'BaseLayout',
    presets: [SwaggerUIBundle.presets.apis],
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    validatorUrl: null,
    // The page's own heading and introduction stand for swagger-ui's info block (one h1 per page).
    plugins: [function () {
      return { wrapComponents: { info: function () { return function () { return null; }; } } };
    }]
  });
});`;
const DOCS_SCRIPT_PATH = hashedAsset('docs', DOCS_JS, 'js');

/** /docs: PAGE_CSP plus inline styles (swagger-ui styles elements from its own script). */
const DOCS_CSP =
  "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; script-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

export interface PagesConfig {
  baseUrl: string;
  siteDomain: string;
  scheme: string;
  /** ABUSE_CONTACT (`mailto:...` or an https URL), shown with the report link. */
  abuseContact?: string | undefined;
}

function landing(config: PagesConfig): SafeHtml {
  const base = config.baseUrl;
  return html`<h1>Slipway: publish a static site in one request and two uploads</h1>
<p>Send a manifest of your files, upload the bytes to the addresses you get back, finalize: the site is live at
<code>${config.scheme}://&lt;slug&gt;.${config.siteDomain}/</code>. No account needed to try it (anonymous sites last 24 hours
and can be claimed); sign in by email for permanent sites, updates that upload only what changed, passwords,
custom domains and more.</p>
<h2>Three steps with curl</h2>
<pre data-copy="the commands"><code>printf '&lt;h1&gt;Hello&lt;/h1&gt;' &gt; index.html

# 1. The manifest: paths, sizes, types (add "hash": sha256 to skip unchanged files on updates)
curl -s ${base}/api/v1/publish -H 'content-type: application/json' \\
  -d '{"files":[{"path":"index.html","size":14,"contentType":"text/html"}]}'

# 2. Upload each file to its address from upload.uploads[] (one PUT per file)
curl -s -X PUT '&lt;upload.uploads[0].url&gt;' -H 'content-type: text/html' --data-binary @index.html

# 3. Finalize: the site is live at siteUrl
curl -s ${base}/api/v1/publish/&lt;slug&gt;/finalize -H 'content-type: application/json' \\
  -d '{"versionId":"&lt;upload.versionId&gt;"}'</code></pre>
<h2>Command line</h2>
<p>Install <code>slipway</code> once, from the Slipway checkout: <code>npm link</code> (or <code>npm install -g .</code>). Then, from anywhere:</p>
<pre data-copy="the commands"><code>export SLIPWAY_URL=${base}
slipway login                        # email, then the code you receive
cd my-site &amp;&amp; slipway publish .      # prints the site URL; --json for scripts
slipway list</code></pre>
<h2>AI agents (MCP)</h2>
<p><code>slipway mcp</code> serves the Model Context Protocol on stdio. A client configuration:</p>
<pre data-copy="the configuration"><code>{ "mcpServers": { "slipway": { "command": "slipway", "args": ["mcp"],
    "env": { "SLIPWAY_URL": "${base}" } } } }</code></pre>
<p>Agents that read plain text: <a href="/llms.txt">/llms.txt</a>. Every endpoint: <a href="/docs">API reference</a>.</p>
<h2>Secrets stay out of published files</h2>
<p>Finalize refuses a site whose files expose a key or password, and says how to fix it: store the secret as an
encrypted site variable and call the API through the site proxy with a <code>{{NAME}}</code> placeholder.</p>
<h2>Abuse</h2>
<p>Found a site here that is phishing, spreading malware or spam, or infringing copyright?
<a href="/report">Report it</a>${config.abuseContact ? html`, or write to ${abuseContactHtml(config.abuseContact)}` : ''}.</p>`;
}

function llmsTxt(config: PagesConfig): string {
  const base = config.baseUrl;
  return `# Slipway

> Static-site hosting for people and agents. Publish a folder of files and get a URL at
> ${config.scheme}://<slug>.${config.siteDomain}/. API base: ${base}. Reference: ${base}/api/openapi.json

## Publish (no account needed; anonymous sites last 24 h and can be claimed)
1. POST ${base}/api/v1/publish with {"files":[{"path","size","contentType","hash"?}]} (1-1000 files).
   Answer: slug, siteUrl, upload.versionId, upload.uploads[] ({path, url, headers}), and for anonymous
   publishes claimToken + claimUrl (shown once: keep them).
2. PUT each file's bytes to its upload url with its Content-Type (exact size; sha256 checked if given).
3. POST ${base}/api/v1/publish/<slug>/finalize with {"versionId"}. The site is live at siteUrl.
Update an owned site: PUT ${base}/api/v1/publish/<slug> with the full manifest and hashes; unchanged
files come back in upload.skipped and need no upload. Then finalize.
Preview instead: finalize with {"versionId","live":false,"alias":"pr-42"?}: the live site stays, the
version is at previewUrl (<slug>--<label>) and the alias at <slug>--pr-42; promote it with
POST ${base}/api/v1/publish/<slug>/versions/<versionId>/restore.

## Accounts
POST ${base}/api/auth/agent/request-code {"email"} -> a code XXXX-XXXX by mail;
POST ${base}/api/auth/agent/verify-code {"email","code"} -> apiKey (shown once).
Send "Authorization: Bearer <apiKey>". Claim: POST ${base}/api/v1/publish/<slug>/claim {"claimToken"}.

## Secrets (finalize answers 400 SECRET_DETECTED)
The body lists detectedSecrets[] (path, type, line, suggestedVariableName, suggestedProxyHosts) and
remediation.steps. Ask the user before changing anything. If they agree: PUT
${base}/api/v1/publish/<slug>/variables {"NAME":"value"}; PUT .../proxy-hosts {"hosts":["api.example.com"]};
change the published copy to call POST ${base}/api/v1/proxy/<slug> {"url","method","headers","body"}
with {{NAME}} where the secret was; update and finalize again. If they refuse, do not publish.

## Limits
Free: 500 sites, 200 MB storage, 200 MB per file, 1 custom domain, 60 requests/hour.
Hobby: unlimited sites, 5 custom domains, a handle (<handle>.${config.siteDomain}), 200 requests/hour.
Anonymous: 5 requests/hour per IP. Uploads to upload urls are not counted.
Errors are JSON {error, code, status} with a hint when there is one.

## Tools
CLI: slipway publish <dir> (--json). MCP server: slipway mcp (stdio), tools publish_site, update_site,
list_sites, get_site, delete_site, set_metadata, claim_site, set_variables, set_proxy_hosts.

## Abuse
Report a site hosted here: ${base}/report?url=<address> (a form), or POST ${base}/api/v1/reports
{"url","category":"phishing|malware|spam|copyright|other","details","contact"?} -> 201 {"id"}.${
    config.abuseContact
      ? `
Contact: ${config.abuseContact}`
      : ''
  }
`;
}

export function landingPages(config: PagesConfig): FastifyPluginAsync {
  const docsPage = layout({
    title: 'Slipway API reference',
    body: html`<h1>API reference</h1>
<p>Every endpoint of the Slipway API with its request, its answers and an example of each, served from
<code>${config.baseUrl}</code>. The document itself:
<a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.0). Send the API key as <code>Authorization: Bearer svc_live_…</code>;
errors are <code>{error, code, status}</code>. A walk-through for agents: <a href="/llms.txt">/llms.txt</a>.</p>`,
    stylesheet: STYLESHEET_PATH,
    head: html`<link rel="stylesheet" href="${SWAGGER_UI_PREFIX}/static/swagger-ui.css">
<script src="${SWAGGER_UI_PREFIX}/static/swagger-ui-bundle.js" defer></script><script src="${DOCS_SCRIPT_PATH}" defer></script>`,
    after: html`<div id="swagger-ui" class="api-reference"></div>`,
    nav: NAV,
  });

  return async (app) => {
    const asset = (path: string, type: string, content: string) =>
      app.get(path, { schema: { hide: true } }, async (_req, reply) =>
        reply
          .header('content-type', type)
          .header('cache-control', 'public, max-age=31536000, immutable')
          .header('x-content-type-options', 'nosniff')
          .send(content),
      );
    asset(STYLESHEET_PATH, 'text/css; charset=utf-8', APP_CSS);
    // The icon's URLs carry no hash, so a day's cache, not a year's.
    for (const path of [FAVICON_PATH, '/favicon.ico']) {
      app.get(path, { schema: { hide: true } }, async (_req, reply) =>
        reply
          .header('content-type', 'image/svg+xml')
          .header('cache-control', 'public, max-age=86400')
          .header('x-content-type-options', 'nosniff')
          .send(FAVICON_SVG),
      );
    }
    asset(SCRIPT_PATH, 'text/javascript; charset=utf-8', APP_JS);
    app.get('/', { schema: { hide: true } }, async (_req, reply) =>
      sendPage(reply, 200, 'Slipway: static-site hosting', landing(config)),
    );
    app.get('/llms.txt', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .header('content-type', 'text/plain; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(llmsTxt(config)),
    );
    asset(DOCS_SCRIPT_PATH, 'text/javascript; charset=utf-8', DOCS_JS);

    // The API reference: our page (layout, title, a way back) around swagger-ui's renderer, whose files
    // @fastify/swagger-ui serves from this host (no CDN) under /docs/ui/static/. Its own index page and
    // JSON copy of the document redirect here: one reference, one document (/api/openapi.json).
    await app.register(swaggerUi, {
      routePrefix: SWAGGER_UI_PREFIX,
      staticCSP: DOCS_CSP,
      uiHooks: {
        onRequest: (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
          if (req.url.startsWith(`${SWAGGER_UI_PREFIX}/static/`)) return done();
          reply.redirect('/docs', 301);
        },
      },
    });
    app.get('/docs', { schema: { hide: true } }, async (_req, reply) =>
      reply
        .code(200)
        .header('content-type', 'text/html; charset=utf-8')
        // The pages' policy, except that swagger-ui sets style attributes from its script (measured in the
        // browser test: the bundle's inline styles are blocked otherwise). Still nothing from another host.
        .header('content-security-policy', DOCS_CSP)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'same-origin')
        .header('cache-control', 'no-cache')
        .send(docsPage),
    );
    app.get('/docs/', { schema: { hide: true } }, async (_req, reply) => reply.redirect('/docs', 301));
  };
}
