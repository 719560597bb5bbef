// `slipway mcp`: a Model Context Protocol server over stdio (the official SDK) exposing Slipway's
// operations as tools for AI agents. Same client and credentials as the CLI (src/client/api.ts; a deploy
// token from SLIPWAY_TOKEN where no key is, which lets update_site publish its own site only); a
// publish goes through the same workflow as `slipway publish` (src/client/publish.ts).

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';
import { ApiClient, ApiClientError, NetworkError } from '../client/api.js';
import {
  collectDirectory,
  inlineFiles,
  type LocalFile,
  publishFiles,
  serviceDataFiles,
} from '../client/publish.js';

export interface McpOptions {
  server: string;
  apiKey?: string;
}

interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  isError?: boolean;
}

const ok = (value: unknown): ToolResult => ({
  content: [{ type: 'text', text: JSON.stringify(value, null, 2) }],
});

/** Server refusals become tool errors the agent can act on; SECRET_DETECTED spells out the remediation. */
function failure(err: unknown): ToolResult {
  if (err instanceof ApiClientError && err.code === 'SECRET_DETECTED') {
    const findings = (err.body.detectedSecrets as Array<Record<string, unknown>> | undefined) ?? [];
    const remediation =
      (err.body.remediation as { steps?: string[]; proxyEnabled?: boolean } | undefined) ?? {};
    // The agent is told to ask its user once, here; the server's own "ask the site owner" step is the same
    // request addressed to a raw API caller.
    const steps = (remediation.steps ?? []).filter((s) => !/^ask the site owner\b/i.test(s));
    const lines = [
      'SECRET_DETECTED: the site was NOT published because files expose secret material.',
      ...findings.map(
        (f) =>
          `- ${f.path}:${f.line} ${f.type} -> store it as variable ${f.suggestedVariableName}${
            Array.isArray(f.suggestedProxyHosts) && f.suggestedProxyHosts.length > 0
              ? ` and call ${f.suggestedProxyHosts.join(', ')} through the site proxy`
              : ''
          }`,
      ),
      'Before changing anything, ask the user for permission. If they agree:',
      ...steps.map((s, i) => `${i + 1}. ${s}`),
      'Tools: set_variables (store the secret), set_proxy_hosts (approve the API host), then update_site with the changed files. If the user refuses, do not publish.',
    ];
    return {
      isError: true,
      content: [
        { type: 'text', text: lines.join('\n') },
        { type: 'text', text: JSON.stringify(err.body, null, 2) },
      ],
    };
  }
  if (err instanceof ApiClientError) {
    return {
      isError: true,
      content: [
        { type: 'text', text: `error ${err.code}: ${err.message}${err.hint ? `\nhint: ${err.hint}` : ''}` },
        { type: 'text', text: JSON.stringify(err.body, null, 2) },
      ],
    };
  }
  const message = err instanceof NetworkError ? err.message : (err as Error).message;
  return { isError: true, content: [{ type: 'text', text: `error: ${message}` }] };
}

const tool =
  <A>(run: (args: A) => Promise<unknown>) =>
  async (args: A): Promise<ToolResult> => {
    try {
      return ok(await run(args));
    } catch (err) {
      return failure(err);
    }
  };

const InlineFile = z.object({
  path: z.string().describe('path inside the site, e.g. "index.html" or "css/site.css"'),
  content: z.string().describe('the file content: text, or base64 when encoding is "base64"'),
  encoding: z.enum(['utf8', 'base64']).optional().describe('default utf8'),
});

const filesInput = {
  directory: z
    .string()
    .optional()
    .describe('absolute path of a local folder to publish (as `slipway publish <dir>`)'),
  files: z.array(InlineFile).optional().describe('or the files inline'),
};

/** CONTRACT "Previews and aliases": a version published without going live, and an alias pointed at it. */
const previewInput = {
  preview: z
    .boolean()
    .optional()
    .describe('true: publish a preview (its own previewUrl); the live site does not change'),
  alias: z
    .string()
    .optional()
    .describe(
      'point this alias (e.g. staging, pr-42) at the new version: <slug>--<alias> host; needs an API key',
    ),
};

function previewOptions(args: { preview?: boolean | undefined; alias?: string | undefined }) {
  return {
    ...(args.preview === true ? { live: false } : {}),
    ...(args.alias !== undefined ? { alias: args.alias } : {}),
  };
}

async function filesFrom(args: {
  directory?: string;
  files?: z.infer<typeof InlineFile>[];
}): Promise<LocalFile[]> {
  if (args.directory && args.files) throw new Error('Give either "directory" or "files", not both.');
  if (args.directory) {
    const files = await collectDirectory(args.directory);
    const data = serviceDataFiles(files);
    if (data.length > 0) {
      throw new Error(
        `Refusing to publish ${args.directory}: it holds a Slipway service's data (${data.slice(0, 3).join(', ')}), such as its database and secrets key. Publish the site's own folder instead.`,
      );
    }
    return files;
  }
  if (args.files && args.files.length > 0) return inlineFiles(args.files);
  throw new Error('Give "directory" (a local folder) or "files" (inline contents).');
}

/** The server with every tool registered (exported for tests that connect in memory). */
export function createMcpServer(client: ApiClient): McpServer {
  const server = new McpServer({ name: 'slipway', version: '0.1.0' });

  server.registerTool(
    'publish_site',
    {
      title: 'Publish a static site',
      description:
        "Publish a new static site from a local directory or inline files. Without an API key the site is anonymous (24 h, claimable: keep claimToken/claimUrl). Returns slug, siteUrl and previewUrl (the version's own URL).",
      inputSchema: {
        ...filesInput,
        title: z.string().optional().describe('viewer title'),
        ttlSeconds: z
          .number()
          .int()
          .positive()
          .optional()
          .describe('expire the site after this many seconds'),
        ...previewInput,
      },
    },
    tool(async (args) =>
      publishFiles(client, await filesFrom(args), {
        title: args.title,
        ttlSeconds: args.ttlSeconds,
        ...previewOptions(args),
      }),
    ),
  );

  server.registerTool(
    'update_site',
    {
      title: 'Update a site',
      description:
        'Publish a new version of an existing site you own (unchanged files are skipped by hash). Give the full set of files. With a deploy token (SLIPWAY_TOKEN) this is the one tool that works, for the token\u2019s own site.',
      inputSchema: {
        slug: z.string(),
        ...filesInput,
        baseVersionId: z.string().optional().describe('fail with VERSION_CONFLICT if the live version moved'),
        ...previewInput,
      },
    },
    tool(async (args) =>
      publishFiles(client, await filesFrom(args), {
        slug: args.slug,
        baseVersionId: args.baseVersionId,
        ...previewOptions(args),
      }),
    ),
  );

  server.registerTool(
    'list_sites',
    { title: 'List sites', description: 'Your sites, newest first.', inputSchema: {} },
    tool(async () => client.listSites()),
  );

  server.registerTool(
    'get_site',
    {
      title: 'Site details',
      description: 'A site you own, with its files.',
      inputSchema: { slug: z.string() },
    },
    tool(async ({ slug }) => client.getSite(slug)),
  );

  server.registerTool(
    'get_site_analytics',
    {
      title: 'Site analytics',
      description:
        'Visits of a site you own: page views, visitors (estimated, once per day), top pages, referrers and ' +
        '404s. Counted by the service without scripts or cookies. Default: the last 7 days by day.',
      inputSchema: {
        slug: z.string(),
        from: z.string().optional().describe('ISO 8601 start (default: 7 days before `to`)'),
        to: z.string().optional().describe('ISO 8601 end, exclusive (default: now)'),
        granularity: z.enum(['hour', 'day']).optional(),
      },
    },
    tool(async ({ slug, from, to, granularity }) =>
      client.getAnalytics(slug, {
        ...(from !== undefined ? { from } : {}),
        ...(to !== undefined ? { to } : {}),
        ...(granularity !== undefined ? { granularity } : {}),
      }),
    ),
  );

  server.registerTool(
    'delete_site',
    {
      title: 'Delete a site',
      description: 'Delete a site permanently (its address is retired). Ask the user first.',
      inputSchema: { slug: z.string() },
      annotations: { destructiveHint: true },
    },
    tool(async ({ slug }) => client.deleteSite(slug)),
  );

  server.registerTool(
    'set_metadata',
    {
      title: 'Set site metadata',
      description:
        'Change title, description, og:image path, password (null removes) or ttlSeconds (null: permanent).',
      inputSchema: {
        slug: z.string(),
        title: z.string().nullable().optional(),
        description: z.string().nullable().optional(),
        ogImagePath: z.string().nullable().optional(),
        password: z.string().nullable().optional(),
        ttlSeconds: z.number().int().positive().nullable().optional(),
      },
    },
    tool(async ({ slug, ...patch }) => client.setMetadata(slug, patch)),
  );

  server.registerTool(
    'claim_site',
    {
      title: 'Claim an anonymous site',
      description: 'Move an anonymous site into your account with the claimToken its publish returned.',
      inputSchema: { slug: z.string(), claimToken: z.string() },
    },
    tool(async ({ slug, claimToken }) => client.claimSite(slug, claimToken)),
  );

  server.registerTool(
    'set_variables',
    {
      title: 'Store site variables',
      description:
        'Store secrets as encrypted site variables (NAME -> value). Pages use them through the site proxy as {{NAME}}; values are never returned. Only with the user’s permission.',
      inputSchema: { slug: z.string(), variables: z.record(z.string(), z.string()) },
    },
    tool(async ({ slug, variables }) => client.setVariables(slug, variables)),
  );

  server.registerTool(
    'set_proxy_hosts',
    {
      title: 'Approve proxy hosts',
      description:
        'Allow the site proxy to call these exact HTTPS hostnames for the site (e.g. api.stripe.com).',
      inputSchema: { slug: z.string(), hosts: z.array(z.string()).min(1) },
    },
    tool(async ({ slug, hosts }) => client.setProxyHosts(slug, hosts)),
  );

  return server;
}

/** Serves MCP on stdin/stdout until the client closes the stream. */
export async function runMcpServer(options: McpOptions): Promise<void> {
  const client = new ApiClient({ server: options.server, apiKey: options.apiKey });
  const server = createMcpServer(client);
  const transport = new StdioServerTransport();
  await server.connect(transport);
  await new Promise<void>((resolve) => {
    server.server.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
}
