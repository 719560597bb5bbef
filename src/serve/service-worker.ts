// Service workers outlive what registered them. A worker installed on a handle host keeps answering for
// it after the handle passes to another account (and on a custom domain after it changes hands, on a
// site after it is deleted, expired or password-protected), until its script can be replaced. The
// browser's update check fetches the script with `Service-Worker: script` (Service Workers §"Update",
// run on every navigation the worker controls); a 404 or an HTML fallback leaves the old worker in
// place. So a worker-script request gets the host's answer only when that is a JavaScript file served
// 200; any other answer is replaced by a script that unregisters the worker and reloads its pages.

import type { OutgoingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import type { SiteRequestHead, SiteResponse } from './exchange.js';

/** What replaces a worker whose script this host no longer serves. */
const UNREGISTER_SCRIPT = Buffer.from(
  `// This address no longer serves the service worker that was registered here.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => {
  event.waitUntil(
    self.registration.unregister()
      .then(() => self.clients.matchAll({ type: 'window' }))
      .then((clients) => Promise.all(clients.map((client) => client.navigate(client.url)))),
  );
});
`,
  'utf8',
);

const UNREGISTER_HEADERS: OutgoingHttpHeaders = {
  'Content-Type': 'text/javascript; charset=utf-8',
  'Content-Length': String(UNREGISTER_SCRIPT.length),
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
};

/** JavaScript MIME types a browser accepts for a worker script (WHATWG MIME Sniffing §4.6). */
const JAVASCRIPT_TYPE = /^\s*(?:text|application)\/(?:x-)?(?:javascript|ecmascript)\s*(?:;|$)/i;

/** Whether the request is a browser's fetch of a service worker's script. */
export const isWorkerScriptRequest = (req: SiteRequestHead): boolean =>
  req.headers['service-worker'] !== undefined;

function contentTypeOf(headers: OutgoingHttpHeaders): string {
  const value = headers['Content-Type'] ?? headers['content-type'];
  return Array.isArray(value) ? String(value[0]) : String(value ?? '');
}

/** A response that lets a JavaScript 200 through and turns anything else into the unregistering script. */
export class WorkerScriptResponse implements SiteResponse {
  constructor(
    private readonly res: SiteResponse,
    private readonly head: boolean,
  ) {}

  private servesScript(status: number, headers: OutgoingHttpHeaders): boolean {
    return status === 200 && JAVASCRIPT_TYPE.test(contentTypeOf(headers));
  }

  private unregister(): void {
    this.res.send(200, UNREGISTER_HEADERS, this.head ? undefined : UNREGISTER_SCRIPT);
  }

  send(status: number, headers: OutgoingHttpHeaders, body?: Buffer): void {
    // Never reusable: the memo must not hand this answer to a request without the field, nor the reverse.
    if (this.servesScript(status, headers)) this.res.send(status, headers, body);
    else this.unregister();
  }

  stream(status: number, headers: OutgoingHttpHeaders, body: Readable, onError: (err: Error) => void): void {
    if (this.servesScript(status, headers)) {
      this.res.stream(status, headers, body, onError);
      return;
    }
    body.destroy();
    this.unregister();
  }

  get headersSent(): boolean {
    return this.res.headersSent;
  }

  get destroyed(): boolean {
    return this.res.destroyed;
  }

  destroy(): void {
    this.res.destroy();
  }
}
