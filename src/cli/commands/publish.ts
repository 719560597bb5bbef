// `slipway publish <dir|file>`: collect, publish through src/client/publish.ts, remember the site in
// .slipway/state.json, print the site URL (stdout) with progress and notes on stderr.

import { stat } from 'node:fs/promises';
import { basename, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type Command, InvalidArgumentError } from 'commander';
import { type ApiClient, ApiClientError, DEFAULT_UPLOAD_CONCURRENCY } from '../../client/api.js';
import type { KnownHashes, LocalFile, PublishEvent, PublishOutcome } from '../../client/publish.js';
import { serverId } from '../credentials.js';
import {
  formatBytes,
  type Output,
  reportFailure,
  restoreTerminal,
  takeTerminal,
  UserError,
} from '../output.js';
import { action, type Session } from '../session.js';
import { readState, type SiteState, statePath, writeState } from '../state.js';

interface PublishFlags {
  slug?: string;
  title?: string;
  ttl?: number;
  concurrency: number;
  force?: boolean;
  verbose?: boolean;
  /** One request: the folder as a tar.gz to the archive endpoint. */
  archive?: boolean;
  /** A preview (`live: false`), and the alias to point at it; the archive deploy sends them as its query. */
  preview?: boolean;
  alias?: string;
}

/** Parses a whole number >= 1 (commander option parser). */
export function positiveInt(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) < 1)
    throw new InvalidArgumentError('expected a whole number >= 1');
  return Number(value);
}

export function registerPublish(program: Command): void {
  program
    .command('publish')
    .description('publish a folder (or a single file) and print the site URL')
    .argument('<path>', 'folder or file to publish')
    .option('--slug <slug>', 'update this site (default: the one .slipway/state.json remembers)')
    .option('--title <title>', 'site title')
    .option(
      '--ttl <seconds>',
      'make the site expire this many seconds from now (needs an account)',
      positiveInt,
    )
    .option('--concurrency <n>', 'parallel uploads', positiveInt, DEFAULT_UPLOAD_CONCURRENCY)
    .option(
      '--preview',
      'publish a preview: the version gets its own URL (<slug>--<label>) and the live site stays as it is',
    )
    .option('--alias <name>', 'point this alias (<slug>--<name>, e.g. staging or pr-42) at the new version')
    .option(
      '--force',
      'replace the live version even if someone published since this folder was last published',
    )
    .option('--archive', 'send the folder as one tar.gz in a single request (CI, agents)')
    .option(
      '--verbose',
      'also list the files read and hashed, and print the API calls behind the steps that fix a refused publish',
    )
    .addHelpText(
      'after',
      `
Refused before anything is sent: a folder holding a Slipway service's data (secrets.key, slipway.db,
outbox.log: a DATA_DIR), whose publication would expose its database and key.

Skipped: .git, node_modules, .slipway, hidden files except .well-known, and whatever .slipwayignore
(gitignore syntax) names; "!name" in .slipwayignore publishes a hidden file after all.

Examples:
  slipway publish ./dist                      # new site, or the site this folder was published to
  slipway publish ./dist --slug bright-fox-42 # update a given site
  slipway publish report.pdf --ttl 86400      # one file, expires in a day
  slipway publish ./dist --json               # {"slug", "siteUrl", "uploaded", "skipped", ...}
  slipway publish ./dist --preview --alias pr-42  # prints the preview URL; promote with slipway promote
  SLIPWAY_TOKEN=svc_site_... slipway publish ./dist --slug bright-fox-42   # from CI, with a deploy token
  slipway publish ./dist --archive            # the same publish in one request (a tar.gz)`,
    )
    .action(action<PublishFlags>(publish));
}

async function publish(session: Session, [target]: string[], flags: PublishFlags): Promise<void> {
  const { out } = session;
  const started = performance.now();
  const abs = resolve(target!);
  const info = await stat(abs).catch(() => undefined);
  if (!info || (!info.isDirectory() && !info.isFile())) {
    throw new UserError(`${target} is not a folder or a file`, { code: 'NO_SUCH_PATH' });
  }
  const isDir = info.isDirectory();
  if (flags.archive) return publishArchive(session, target!, abs, isDir, flags, started);
  const [{ collectDirectory, collectFile, publishFiles, serviceDataFiles }, hashes] = await Promise.all([
    import('../../client/publish.js'),
    import('../hashes.js'),
  ]);
  // A file whose stamp did not change since the last publish keeps its remembered hash (../hashes.ts).
  const hashesFile = hashes.hashesPath(isDir ? { dir: abs } : { file: abs });
  const remembered = await hashes.readHashes(hashesFile);
  if (remembered.damaged) out.note(`note: ${hashesFile} is damaged or was edited; hashing every file`);
  const onHashed = flags.verbose ? (path: string) => out.note(`hashed ${path}`) : undefined;
  const collect = (known?: KnownHashes): Promise<LocalFile[]> => {
    const options = { ...(known ? { known } : {}), ...(onHashed ? { onHashed } : {}) };
    return isDir ? collectDirectory(abs, options) : collectFile(abs, options);
  };
  const remember = (found: LocalFile[]) =>
    hashes.writeHashes(hashesFile, found).catch((err: NodeJS.ErrnoException) => {
      out.note(`note: could not remember the file hashes in ${hashesFile} (${err.code ?? err.message})`);
    });
  const all = await collect(remembered.known);
  const serviceData = serviceDataFiles(all);
  if (serviceData.length > 0) {
    throw new UserError(
      `refusing to publish ${target}: it holds a Slipway service's data (${listedPaths(serviceData)}), its database, secrets key or sign-in codes`,
      {
        code: 'SERVICE_DATA',
        hint: `Publish the site's own folder (e.g. ./dist), not the service's checkout or its DATA_DIR (${abs}). Under npm, relative paths follow the folder you ran \`npm run cli\` from.`,
      },
    );
  }
  await remember(all);
  let files = all.filter((f) => f.size > 0);
  const empty = all.filter((f) => f.size === 0);
  if (empty.length > 0) {
    out.note(`skipping ${empty.length} empty file(s) (the service stores no empty files): ${listed(empty)}`);
  }
  if (files.length === 0) {
    throw new UserError(`nothing to publish in ${target}`, {
      code: 'NOTHING_TO_PUBLISH',
      hint: 'Every file is empty, hidden or ignored (.slipwayignore).',
    });
  }

  const stateFile = statePath(isDir ? { dir: abs } : { file: abs });
  const saved = await readState(stateFile);
  const here = saved && serverId(saved.server) === serverId(session.server) ? saved : undefined;
  const client = session.client;
  let slug = flags.slug ?? here?.slug;
  let fromState = flags.slug === undefined && here !== undefined;

  if (session.deployToken) {
    tokenSite(flags, here, `slipway publish ${target} --slug <its site>`);
  } else if (!client.apiKey) {
    if (flags.slug !== undefined) await session.authed();
    if (flags.ttl !== undefined) {
      throw new UserError('--ttl needs an account: anonymous sites expire after 24 hours', {
        code: 'NOT_LOGGED_IN',
        hint: 'Run `slipway login` first.',
      });
    }
    if (flags.alias !== undefined) {
      throw new UserError('--alias needs an account: aliases belong to owned sites', {
        code: 'NOT_LOGGED_IN',
        hint: 'Run `slipway login` first.',
      });
    }
    if (here) {
      out.note(`note: without a key this publishes a new anonymous site; ${here.slug} is not updated.`);
      if (here.claimUrl)
        out.note(
          `  keep ${here.slug}: run \`slipway login\` then \`slipway claim\`, or open ${here.claimUrl}`,
        );
    }
    slug = undefined;
    fromState = false;
  } else if (here?.claimToken && slug === here.slug) {
    if (!(await claimBeforeUpdate(session, client, here, stateFile))) {
      if (flags.slug !== undefined)
        throw new UserError(`${here.slug} cannot be claimed or updated with your key`);
      slug = undefined;
      fromState = false;
    }
  }
  // A preview leaves the live version as it is: nothing to conflict with.
  const baseVersionId =
    flags.force || flags.preview || !here || here.slug !== slug ? undefined : here.versionId;

  const progress = await createProgress(out);
  let earlyState: Promise<void> = Promise.resolve();
  let planSlug: string | undefined;
  const onEvent = (e: PublishEvent) => {
    if (e.kind === 'plan' && e.slug) {
      planSlug = e.slug;
      // A new owned site is remembered at once: a rerun after an interruption updates it, and the
      // server skips what was uploaded already.
      if (client.apiKey && e.slug !== slug) {
        earlyState = writeState(stateFile, { slug: e.slug, versionId: null, server: session.server }).catch(
          () => {},
        );
      }
    }
    progress.handle(e);
  };
  const send = (site: string | undefined, base: string | null | undefined) =>
    publishFiles(client, files, {
      ...(site !== undefined ? { slug: site, baseVersionId: base } : {}),
      ...(flags.title !== undefined ? { title: flags.title } : {}),
      ...(flags.ttl !== undefined ? { ttlSeconds: flags.ttl } : {}),
      ...(flags.preview ? { live: false } : {}),
      ...(flags.alias !== undefined ? { alias: flags.alias } : {}),
      concurrency: flags.concurrency,
      onEvent,
    });
  let rehashed = false;
  const attempt = async (site: string | undefined, base: string | null | undefined) => {
    try {
      return await send(site, base);
    } catch (err) {
      if (rehashed || !(err instanceof ApiClientError && err.code === 'INVALID_HASH')) throw err;
      // The service hashes what it receives: the bytes changed since they were hashed, or came with a
      // wrong remembered hash. Forget the remembered hashes, read every file again, send again once.
      rehashed = true;
      progress.stop();
      out.note(
        `note: ${err.message} The file changed since it was hashed, or ${hashesFile} held a wrong hash; hashing every file again.`,
      );
      await hashes.forgetHashes(hashesFile);
      const again = await collect();
      await remember(again);
      files = again.filter((f) => f.size > 0);
      // An owned site the failed attempt created has no live version yet; an anonymous one cannot be updated.
      if (site === undefined && client.apiKey && planSlug !== undefined) return send(planSlug, null);
      return send(site, base);
    }
  };

  let outcome: PublishOutcome;
  try {
    try {
      outcome = await attempt(slug, baseVersionId);
    } catch (err) {
      // The remembered site is gone (deleted, or an anonymous site that expired): start a new one.
      if (!(fromState && err instanceof ApiClientError && err.status === 404)) throw err;
      progress.stop();
      out.note(`note: ${slug} no longer exists (deleted or expired); publishing a new site`);
      slug = undefined;
      outcome = await attempt(undefined, undefined);
    }
  } catch (err) {
    progress.stop();
    await earlyState;
    if (err instanceof ApiClientError && err.code === 'SECRET_DETECTED') {
      process.exitCode = reportFailure(out, err, () =>
        printFindings(out, err, {
          slug: planSlug ?? slug ?? '<slug>',
          anonymous: !client.apiKey,
          target: target!,
          server: session.server,
          verbose: flags.verbose === true,
        }),
      );
      return;
    }
    if (err instanceof ApiClientError && err.code === 'INVALID_HASH') {
      throw new ApiClientError(err.status, {
        ...err.body,
        hint: `A file under ${target} changed while it was published, twice; publish again once nothing is writing to it.`,
      });
    }
    if (err instanceof ApiClientError && err.code === 'VERSION_CONFLICT') {
      throw new ApiClientError(err.status, {
        ...err.body,
        hint: `${slug} changed since this folder was last published (another publish or a rollback); run \`slipway publish ${target} --force\` to replace it anyway.`,
      });
    }
    throw err;
  }
  progress.stop();
  await earlyState;

  // The folder's next publish is based on the live version: a preview does not change it.
  const liveVersionId = outcome.live
    ? outcome.versionId
    : here?.slug === outcome.slug
      ? here.versionId
      : null;
  const state: SiteState = { slug: outcome.slug, versionId: liveVersionId, server: session.server };
  if (outcome.claimToken) state.claimToken = outcome.claimToken;
  if (outcome.claimUrl) state.claimUrl = outcome.claimUrl;
  if (outcome.anonymous && outcome.expiresAt) state.expiresAt = outcome.expiresAt;
  await writeState(stateFile, state);

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  out.note(
    `published ${files.length} file(s) to ${outcome.slug}: ${outcome.uploaded} uploaded, ${outcome.skipped} unchanged (${seconds} s)`,
  );
  if (outcome.anonymous) {
    out.note(`warning: this site is anonymous and will be deleted in 24 hours (${outcome.expiresAt ?? ''}).`);
    out.note(`claim it to keep it: ${outcome.claimUrl ?? ''}`);
    out.note('  or run `slipway login` then `slipway claim` in this folder.');
  }
  const doc: Record<string, unknown> = {
    slug: outcome.slug,
    siteUrl: outcome.siteUrl,
    versionId: outcome.versionId,
    status: outcome.status,
    uploaded: outcome.uploaded,
    skipped: outcome.skipped,
    anonymous: outcome.anonymous,
  };
  if (outcome.claimUrl) doc.claimUrl = outcome.claimUrl;
  if (outcome.expiresAt) doc.expiresAt = outcome.expiresAt;
  // The alias host is the site host's label with `--<name>` (CONTRACT "Previews and aliases").
  const aliasUrl =
    flags.alias === undefined
      ? undefined
      : outcome.siteUrl.replace(`//${outcome.slug}.`, `//${outcome.slug}--${flags.alias}.`);
  if (flags.preview) {
    doc.previewUrl = outcome.previewUrl;
    if (aliasUrl !== undefined) doc.aliasUrl = aliasUrl;
    if (!outcome.live)
      out.note(
        `preview only: ${outcome.siteUrl} still serves the live version; promote with \`slipway promote ${outcome.slug} ${flags.alias ?? outcome.versionId}\``,
      );
  }
  if (aliasUrl !== undefined) out.note(`alias ${flags.alias}: ${aliasUrl}`);
  out.result(doc, () => out.line(flags.preview ? outcome.previewUrl : outcome.siteUrl));
}

/**
 * Claims the anonymous site this folder published before updating it with the user's key. False when
 * it is neither claimable nor already the user's (expired, claimed by someone else).
 */
async function claimBeforeUpdate(
  session: Session,
  client: ApiClient,
  here: SiteState,
  stateFile: string,
): Promise<boolean> {
  const { claimToken: token, claimUrl: _url, expiresAt: _expires, ...kept } = here;
  try {
    await client.claimSite(here.slug, token!);
    session.out.note(`claimed ${here.slug} into your account (it no longer expires)`);
  } catch (err) {
    if (!(err instanceof ApiClientError) || err.status >= 500) throw err;
    // Already claimed by this account (e.g. in the browser) is fine too.
    const mine = await client.getSite(here.slug).then(
      () => true,
      () => false,
    );
    if (!mine) {
      session.out.note(`note: cannot claim ${here.slug} (${err.message}); publishing a new site`);
      return false;
    }
  }
  await writeState(stateFile, kept);
  return true;
}

function listed(files: LocalFile[]): string {
  return listedPaths(files.map((f) => f.path));
}

function listedPaths(paths: string[]): string {
  const names = paths.slice(0, 5);
  return paths.length > 5 ? `${names.join(', ')}, ...` : names.join(', ');
}

interface Finding {
  path: string;
  type: string;
  line: number;
  suggestedVariableName: string;
  suggestedProxyHosts: string[];
}

/** A remediation step that is a raw HTTP call (printed with --verbose only: the CLI has commands for them). */
const HTTP_CALL = /\b(?:GET|PUT|POST|PATCH|DELETE) (?:https?:\/\/|\/api\/)/;

/**
 * SECRET_DETECTED: each finding, then the CLI's own commands that fix it (variables, hosts, the code
 * change, the republish); the server's remediation steps as API calls only with --verbose. A step
 * about the site proxy being switched off is always shown: without it the fix cannot work.
 */
function printFindings(
  out: Output,
  err: ApiClientError,
  ctx: { slug: string; anonymous: boolean; target: string; server: string; verbose: boolean },
): void {
  const { slug } = ctx;
  const findings = Array.isArray(err.body.detectedSecrets) ? (err.body.detectedSecrets as Finding[]) : [];
  const remediation = (err.body.remediation ?? {}) as {
    steps?: string[];
    suggestedVariableNames?: string[];
    suggestedProxyHosts?: string[];
    proxyEnabled?: boolean;
  };
  for (const f of findings) {
    const hosts = f.suggestedProxyHosts ?? [];
    const via = hosts.length > 0 ? ` via host ${hosts.join(',')}` : '';
    out.note(`${f.path}:${f.line}  ${f.type}  -> use variable ${f.suggestedVariableName}${via}`);
  }
  const names = [
    ...new Set([
      ...findings.map((f) => f.suggestedVariableName),
      ...(remediation.suggestedVariableNames ?? []),
    ]),
  ].filter((n) => typeof n === 'string' && n !== '');
  const hosts = [
    ...new Set([
      ...findings.flatMap((f) => f.suggestedProxyHosts ?? []),
      ...(remediation.suggestedProxyHosts ?? []),
    ]),
  ];
  const steps = remediation.steps ?? [];
  if (remediation.proxyEnabled === false) {
    out.note(
      'The site proxy is switched off on this server: its operator must set PROXY_ENABLED=true ' +
        '(self-hosting: restart with PROXY_ENABLED=true); until then the page cannot call the API through it.',
    );
  }
  if (names.length > 0) {
    out.note('To fix it (each value is read from a prompt or stdin, never from the command line):');
    if (ctx.anonymous)
      out.note('  (these need an account: run `slipway login`, publish again and use the new slug)');
    for (const name of names) out.note(`  slipway vars set ${slug} ${name}`);
    if (hosts.length > 0) for (const host of hosts) out.note(`  slipway hosts add ${slug} ${host}`);
    else out.note(`  slipway hosts add ${slug} <api host>`);
    const paths = [...new Set(findings.map((f) => f.path))];
    const placeholders = names.map((n) => `{{${n}}}`).join(', ');
    out.note(
      `  then, in ${paths.length > 0 ? paths.join(', ') : 'the files above'}, remove each secret and call its API through the site proxy (POST ${ctx.server}/api/v1/proxy/${slug}), writing ${placeholders} where ${names.length === 1 ? 'the secret was' : 'each secret was (the list above names which)'}`,
    );
    // What "call its API through the site proxy" means in the page: without it a user knew the
    // address but not the request (issue 21 walkthrough).
    out.note(
      `    (the page's fetch() sends the proxy JSON {"url": "https://${hosts[0] ?? '<api host>'}/...", "method", "headers", "body"} and gets the API's own status and body back; example: ${ctx.server}/docs#/proxy)`,
    );
    out.note(`  slipway publish ${ctx.target}`);
  }
  if ((ctx.verbose || names.length === 0) && steps.length > 0) {
    out.note('The same as API calls (remediation.steps):');
    steps.forEach((step, i) => {
      out.note(`  ${i + 1}. ${step}`);
    });
  } else if (steps.some((step) => HTTP_CALL.test(step))) {
    out.note('(add --verbose for the API calls behind these steps)');
  }
  out.note('Nothing was published.');
}

interface Progress {
  handle(e: PublishEvent): void;
  stop(): void;
}

/** A progress bar on a terminal (files, bytes, speed, ETA); plain lines on stderr otherwise. */
async function createProgress(out: Output): Promise<Progress> {
  if (!process.stderr.isTTY) {
    return {
      handle(e) {
        if (e.kind === 'plan') {
          out.note(`uploading ${e.uploads} file(s) (${formatBytes(e.bytes)}), ${e.skipped} unchanged`);
        } else if (e.kind === 'retry') {
          out.note(`retrying ${e.path || 'request'} (attempt ${e.attempt + 1}): ${e.reason}`);
        } else if (e.kind === 'finalizing') {
          out.note('finalizing');
        }
      },
      stop() {},
    };
  }
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format: '{bar} {value}/{total} files | {done} of {size} | {speed}/s | ETA {etaText}',
      barsize: 24,
      hideCursor: true,
      clearOnComplete: true,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  let running = false;
  let totalBytes = 0;
  let doneBytes = 0;
  let startedAt = 0;
  const payload = () => {
    const elapsed = (performance.now() - startedAt) / 1000;
    const speed = elapsed > 0 ? doneBytes / elapsed : 0;
    const eta = speed > 0 ? Math.ceil((totalBytes - doneBytes) / speed) : 0;
    return {
      done: formatBytes(doneBytes),
      size: formatBytes(totalBytes),
      speed: formatBytes(Math.round(speed)),
      etaText: speed > 0 ? `${eta} s` : '-',
    };
  };
  return {
    handle(e) {
      if (e.kind === 'plan') {
        if (e.uploads === 0) {
          out.note(`nothing to upload: ${e.skipped} file(s) unchanged`);
          return;
        }
        totalBytes = e.bytes;
        startedAt = performance.now();
        running = true;
        takeTerminal();
        bar.start(e.uploads, 0, payload());
      } else if (e.kind === 'uploaded' && running) {
        doneBytes += e.bytes;
        bar.increment(1, payload());
      } else if (e.kind === 'retry') {
        process.stderr.write(
          `\r\x1b[Kretrying ${e.path || 'request'} (attempt ${e.attempt + 1}): ${e.reason}\n`,
        );
      } else if (e.kind === 'finalizing' && running) {
        bar.stop();
        restoreTerminal(false);
        running = false;
      }
    },
    stop() {
      if (running) {
        bar.stop();
        restoreTerminal(false);
      }
      running = false;
    },
  };
}

/**
 * The site a deploy token (SLIPWAY_TOKEN) publishes: `--slug` or the folder's state. A token publishes its own
 * site and nothing else: no new site, no metadata (refused here, before a version goes live), no claim.
 */
function tokenSite(flags: PublishFlags, here: SiteState | undefined, command: string): string {
  const slug = flags.slug ?? here?.slug;
  if (slug === undefined) {
    throw new UserError('SLIPWAY_TOKEN is a deploy token: it can only update the site it was made for', {
      code: 'NEEDS_SLUG',
      hint: `Run \`${command}\`.`,
    });
  }
  if (flags.title !== undefined || flags.ttl !== undefined) {
    throw new UserError("--title and --ttl change the site's metadata, which needs the owner's API key", {
      code: 'NEEDS_KEY',
      hint: 'A deploy token may only publish new versions; set them with SLIPWAY_API_KEY.',
    });
  }
  return slug;
}

/** The finalize options an archive deploy sends as query parameters: `--preview` is `live=false`. */
export function archiveQuery(flags: Pick<PublishFlags, 'preview' | 'alias'>): {
  live?: boolean;
  alias?: string;
} {
  return {
    ...(flags.preview ? { live: false } : {}),
    ...(flags.alias !== undefined ? { alias: flags.alias } : {}),
  };
}

/**
 * `publish --archive`: the same files a publish sends (skip rules, .slipwayignore, no empty files), packed
 * into one tar.gz and sent in one request; the same state, notes and output as a publish.
 */
async function publishArchive(
  session: Session,
  target: string,
  abs: string,
  isDir: boolean,
  flags: PublishFlags,
  started: number,
): Promise<void> {
  const { out } = session;
  const [{ listDirectory, serviceDataFiles }, { deployArchive }] = await Promise.all([
    import('../../client/publish.js'),
    import('../../client/archive.js'),
  ]);
  const all = isDir ? await listDirectory(abs) : [{ path: basename(abs), abs, size: (await stat(abs)).size }];
  const serviceData = serviceDataFiles(all);
  if (serviceData.length > 0) {
    throw new UserError(
      `refusing to publish ${target}: it holds a Slipway service's data (${listedPaths(serviceData)}), its database, secrets key or sign-in codes`,
      {
        code: 'SERVICE_DATA',
        hint: `Publish the site's own folder (e.g. ./dist), not the service's DATA_DIR (${abs}).`,
      },
    );
  }
  const files = all.filter((f) => f.size > 0);
  const empty = all.filter((f) => f.size === 0);
  if (empty.length > 0) {
    out.note(
      `skipping ${empty.length} empty file(s) (the service stores no empty files): ${listedPaths(empty.map((f) => f.path))}`,
    );
  }
  if (files.length === 0) {
    throw new UserError(`nothing to publish in ${target}`, {
      code: 'NOTHING_TO_PUBLISH',
      hint: 'Every file is empty, hidden or ignored (.slipwayignore).',
    });
  }

  const stateFile = statePath(isDir ? { dir: abs } : { file: abs });
  const saved = await readState(stateFile);
  const here = saved && serverId(saved.server) === serverId(session.server) ? saved : undefined;
  const client = session.client;
  let slug: string | undefined;
  let fromState = false;
  if (session.deployToken) {
    slug = tokenSite(flags, here, `slipway publish ${target} --archive --slug <its site>`);
  } else if (!client.apiKey) {
    if (flags.slug !== undefined) await session.authed();
    if (flags.ttl !== undefined) {
      throw new UserError('--ttl needs an account: anonymous sites expire after 24 hours', {
        code: 'NOT_LOGGED_IN',
        hint: 'Run `slipway login` first.',
      });
    }
    if (here)
      out.note(`note: without a key this publishes a new anonymous site; ${here.slug} is not updated.`);
  } else {
    slug = flags.slug ?? here?.slug;
    fromState = flags.slug === undefined && here !== undefined;
    if (
      here?.claimToken &&
      slug === here.slug &&
      !(await claimBeforeUpdate(session, client, here, stateFile))
    ) {
      if (flags.slug !== undefined)
        throw new UserError(`${here.slug} cannot be claimed or updated with your key`);
      slug = undefined;
      fromState = false;
    }
  }

  const bytes = files.reduce((sum, f) => sum + f.size, 0);
  out.note(`sending ${files.length} file(s) (${formatBytes(bytes)}) as one archive`);
  const send = (site: string | undefined) =>
    deployArchive(client, files, {
      ...(site !== undefined ? { slug: site } : {}),
      query: archiveQuery(flags),
    });
  let reply: Awaited<ReturnType<typeof send>>;
  try {
    try {
      reply = await send(slug);
    } catch (err) {
      if (!(fromState && err instanceof ApiClientError && err.status === 404)) throw err;
      out.note(`note: ${slug} no longer exists (deleted or expired); publishing a new site`);
      slug = undefined;
      reply = await send(undefined);
    }
  } catch (err) {
    if (err instanceof ApiClientError && err.code === 'SECRET_DETECTED') {
      process.exitCode = reportFailure(out, err, () =>
        printFindings(out, err, {
          slug: slug ?? '<slug>',
          anonymous: !client.apiKey,
          target,
          server: session.server,
          verbose: flags.verbose === true,
        }),
      );
      return;
    }
    throw err;
  }

  const patch: Record<string, unknown> = {};
  if (flags.title !== undefined) patch.title = flags.title;
  if (flags.ttl !== undefined) patch.ttlSeconds = flags.ttl;
  let expiresAt = reply.expiresAt;
  if (Object.keys(patch).length > 0) {
    await client.setMetadata(reply.slug, patch);
    if (flags.ttl !== undefined) expiresAt = (await client.getSite(reply.slug)).expiresAt ?? undefined;
  }
  const anonymous = reply.anonymous === true;
  // The folder's next publish is based on the live version: a preview does not change it.
  const live = (reply as { live?: boolean }).live !== false;
  const liveVersionId = live ? reply.versionId : here?.slug === reply.slug ? here.versionId : null;
  const state: SiteState = { slug: reply.slug, versionId: liveVersionId, server: session.server };
  if (reply.claimToken) state.claimToken = reply.claimToken;
  if (reply.claimUrl) state.claimUrl = reply.claimUrl;
  if (anonymous && expiresAt) state.expiresAt = expiresAt;
  await writeState(stateFile, state);

  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  out.note(
    `published ${files.length} file(s) to ${reply.slug}: ${reply.uploaded} uploaded, ${reply.skipped} unchanged (${seconds} s, one request)`,
  );
  if (anonymous) {
    out.note(`warning: this site is anonymous and will be deleted in 24 hours (${expiresAt ?? ''}).`);
    out.note(`claim it to keep it: ${reply.claimUrl ?? ''}`);
    out.note('  or run `slipway login` then `slipway claim` in this folder.');
  }
  const doc: Record<string, unknown> = {
    slug: reply.slug,
    siteUrl: reply.siteUrl,
    versionId: reply.versionId,
    status: reply.status,
    uploaded: reply.uploaded,
    skipped: reply.skipped,
    anonymous,
  };
  if (reply.claimUrl) doc.claimUrl = reply.claimUrl;
  if (expiresAt) doc.expiresAt = expiresAt;
  // As a three-step publish prints it: a preview's URL, and its alias.
  const previewUrl = (reply as { previewUrl?: string }).previewUrl;
  if (flags.preview && previewUrl !== undefined) {
    doc.previewUrl = previewUrl;
    out.note(
      `preview only: ${reply.siteUrl} still serves the live version; promote with \`slipway promote ${reply.slug} ${flags.alias ?? reply.versionId}\``,
    );
  }
  if (flags.alias !== undefined) {
    const aliasUrl = reply.siteUrl.replace(`//${reply.slug}.`, `//${reply.slug}--${flags.alias}.`);
    if (flags.preview) doc.aliasUrl = aliasUrl;
    out.note(`alias ${flags.alias}: ${aliasUrl}`);
  }
  out.result(doc, () => out.line(flags.preview && previewUrl ? previewUrl : reply.siteUrl));
}
