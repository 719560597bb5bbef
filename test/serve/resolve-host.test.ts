// Host resolution rules: hostname normalisation, the site label under SITE_DOMAIN, and mounts by prefix.

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type HostRoute, hostnameOf, mountFor, siteLabelOf } from '../../src/serve/resolve-host.js';

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
