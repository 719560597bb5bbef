// The host rule's pure parts (src/core/hosts.ts): hostname normalisation, the site label under
// SITE_DOMAIN, the kind of a host, its page origins, and mounts by prefix.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  type HostRoute,
  hostnameOf,
  hostOrigins,
  mountFor,
  parseHost,
  siteLabelOf,
} from '../../src/core/hosts.js';

describe('hostnameOf', () => {
  const cases: Array<[string | undefined, string]> = [
    [undefined, ''],
    ['', ''],
    ['Abc.Example.COM', 'abc.example.com'],
    ['abc.localhost:8080', 'abc.localhost'],
    ['abc.example.com.', 'abc.example.com'],
    ['abc.example.com.:443', 'abc.example.com'],
    ['[::1]:8080', '[::1]'],
  ];
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () =>
      assert.equal(hostnameOf(input), expected));
  }
});

describe('siteLabelOf', () => {
  const cases: Array<[string, string, string | null]> = [
    ['abc.localhost', 'localhost', 'abc'],
    ['bright-canvas-a7k2qm.slipway.page', 'slipway.page', 'bright-canvas-a7k2qm'],
    ['localhost', 'localhost', null],
    ['.localhost', 'localhost', null],
    ['a.b.localhost', 'localhost', null],
    ['abclocalhost', 'localhost', null],
    ['abc.example.org', 'localhost', null],
  ];
  for (const [hostname, siteHost, expected] of cases) {
    test(`${hostname} under ${siteHost} -> ${expected}`, () =>
      assert.equal(siteLabelOf(hostname, siteHost), expected));
  }
});

describe('parseHost', () => {
  const cases: Array<[string, ReturnType<typeof parseHost>]> = [
    ['bright-canvas-a7k2qm.localhost', { kind: 'label', label: 'bright-canvas-a7k2qm' }],
    // `<slug>--<name>`: a preview host (a handle of that exact name, taken before `--` was refused in new
    // handles, is looked up first: resolveHost).
    ['old--name.localhost', { kind: 'preview', label: 'old--name', slug: 'old', name: 'name' }],
    [
      'bright-canvas-a7k2qm--3k9x0abcde.localhost',
      {
        kind: 'preview',
        label: 'bright-canvas-a7k2qm--3k9x0abcde',
        slug: 'bright-canvas-a7k2qm',
        name: '3k9x0abcde',
      },
    ],
    // No alias or label has these forms after `--`: only an old handle of that name could.
    ['a--b.localhost', { kind: 'label', label: 'a--b' }],
    ['abc--b--c.localhost', { kind: 'label', label: 'abc--b--c' }],
    ['abc--1short.localhost', { kind: 'label', label: 'abc--1short' }],
    ['shop.customer.example', { kind: 'domain', domain: 'shop.customer.example' }],
    ['a.b.localhost', { kind: 'domain', domain: 'a.b.localhost' }],
    // No slug or handle has these forms: nothing to look up.
    ['ab.localhost', null],
    ['-abc.localhost', null],
    ['abc-.localhost', null],
    ['ab_c.localhost', null],
    [`${'a'.repeat(64)}.localhost`, null],
  ];
  for (const [hostname, expected] of cases) {
    test(`${hostname} -> ${JSON.stringify(expected)}`, () =>
      assert.deepEqual(parseHost(hostname, 'localhost'), expected));
  }
});

describe('hostOrigins', () => {
  const config = (scheme: 'http' | 'https', siteDomain: string) => ({
    scheme,
    siteDomain,
    siteHost: siteDomain.replace(/:\d+$/, ''),
    planOverrides: {},
  });
  test('a site or handle host: BASE_URL scheme and SITE_DOMAIN port', () => {
    assert.deepEqual(hostOrigins(config('http', 'localhost:8080'), 'abc.localhost'), [
      'http://abc.localhost:8080',
    ]);
    assert.deepEqual(hostOrigins(config('https', 'slipway.site'), 'abc.slipway.site'), [
      'https://abc.slipway.site',
    ]);
  });
  test('a custom domain: https, and http too on an http BASE_URL', () => {
    assert.deepEqual(hostOrigins(config('https', 'slipway.site'), 'shop.example'), ['https://shop.example']);
    assert.deepEqual(hostOrigins(config('http', 'localhost:8080'), 'shop.example'), [
      'https://shop.example',
      'http://shop.example',
    ]);
  });
});

describe('mountFor', () => {
  const route: HostRoute = {
    mounts: [
      { slug: 'docs', basePath: '/docs/v2' },
      { slug: 'blog', basePath: '/blog' },
      { slug: 'home', basePath: '' },
    ],
  };
  const cases: Array<[string, string, string]> = [
    ['/', 'home', '/'],
    ['/blog/post', 'blog', '/post'],
    ['/blog/', 'blog', '/'],
    ['/blog', 'blog', ''],
    ['/blogger', 'home', '/blogger'],
    ['/docs/v2/x', 'docs', '/x'],
    ['/docs/v1/x', 'home', '/docs/v1/x'],
  ];
  for (const [path, slug, sitePath] of cases) {
    test(`${path} -> ${slug} ${sitePath}`, () => {
      const found = mountFor(route, path);
      assert.equal(found?.mount.slug, slug);
      assert.equal(found?.sitePath, sitePath);
    });
  }
  test('no mount covers the path -> null', () => {
    assert.equal(mountFor({ mounts: [{ slug: 'b', basePath: '/blog' }] }, '/other'), null);
  });
});
