/**
 * @module server/console
 * The review console's static files at `/console/` (built by `npm run build` from
 * `src/console` into `dist/console`) and the ticketed evaluation reports at
 * `/console/report/{ticket}`.
 *
 * These routes are public — the page holds no data; every datum it shows comes from the
 * authenticated `/v1` API with the API key the user typed. The page runs under a strict
 * Content-Security-Policy: scripts only from this origin (no inline script, no eval), no
 * network beyond this origin, no framing. A report runs under its own, stricter policy: no
 * script at all, sandboxed, only its inline styles and data: images.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Context, Hono } from 'hono';
import { EdgeError } from './errors.js';
import type { ReportLibrary } from './reports.js';
import type { AppEnv } from './routes.js';

/** The console page's policy (CSP Level 3). */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** A report's policy: no script, no network, sandboxed (opaque origin), framed only by us. */
export const REPORT_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
  'sandbox',
].join('; ');

/** The built files, by URL name. */
const ASSETS: Readonly<Record<string, string>> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

/** Where `npm run build` puts the console, relative to this module in `dist/server`. */
export function defaultConsoleDir(): string {
  return fileURLToPath(new URL('../console/', import.meta.url));
}

function loadAssets(dir: string): Map<string, Buffer> | undefined {
  const out = new Map<string, Buffer>();
  try {
    for (const name of Object.keys(ASSETS)) out.set(name, readFileSync(join(dir, name)));
  } catch {
    return undefined;
  }
  return out;
}

const TICKET_RE = /^[A-Za-z0-9_-]{32}$/;

/** Register `/console` and `/console/*`. Files are read once, here. */
export function registerConsole(
  app: Hono<AppEnv>,
  opts: { readonly dir?: string; readonly reports: ReportLibrary },
): void {
  const assets = loadAssets(opts.dir ?? defaultConsoleDir());
  const common = (c: Context<AppEnv>): void => {
    c.header('referrer-policy', 'no-referrer');
    c.header('cross-origin-opener-policy', 'same-origin');
    c.header('cross-origin-resource-policy', 'same-origin');
  };

  app.get('/console', (c) => c.redirect('/console/', 301));
  app.get('/console/*', async (c) => {
    common(c);
    const rest = c.req.path.slice('/console/'.length);
    if (rest.startsWith('report/')) {
      const ticket = rest.slice('report/'.length);
      const html = TICKET_RE.test(ticket) ? await opts.reports.redeem(ticket) : undefined;
      if (html === undefined) throw new EdgeError('ROUTE_NOT_FOUND', 'no such report ticket');
      return c.body(html, 200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': REPORT_CSP,
        'x-frame-options': 'SAMEORIGIN',
        'cache-control': 'no-store',
      });
    }
    const name = rest === '' ? 'index.html' : rest;
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (type === undefined) throw new EdgeError('ROUTE_NOT_FOUND', 'no such console file');
    const body = assets?.get(name);
    if (body === undefined)
      throw new EdgeError('ROUTE_NOT_FOUND', 'the console is not built (npm run build)');
    return c.body(new Uint8Array(body), 200, {
      'content-type': type,
      'content-security-policy': CONSOLE_CSP,
      'x-frame-options': 'DENY',
      'cache-control': 'no-cache',
    });
  });
}
