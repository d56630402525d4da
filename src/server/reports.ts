/**
 * @module server/reports
 * The evaluation reports the console lists: every folder under the reports directory (by
 * default `eval-out`, where `memwarden eval …` writes) that holds a `report.html`.
 *
 * A browser cannot send a bearer header when it loads a document into a frame, so a report is
 * opened through a ticket: an authenticated `POST /v1/reports/{name}/ticket` returns a random,
 * single-use URL valid for one minute, and `GET /console/report/{ticket}` serves the report
 * under its own strict policy (no scripts, no network, sandboxed). The ticket is the only
 * capability; it never carries the API key.
 */
import { randomBytes } from 'node:crypto';
import { lstat, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { MemwardenError } from '../core/errors.js';

/** One report as listed to the console. */
export interface ReportInfo {
  readonly name: string;
  /** The document's `<title>`, as text (may be empty). */
  readonly title: string;
  readonly modifiedAt: string;
  readonly bytes: number;
}

/** Folder names that may be reports: no separators, no dot-files, bounded. */
const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** Largest report served (a self-contained HTML page with inline SVG). */
export const MAX_REPORT_BYTES = 8 * 1024 * 1024;
const TICKET_TTL_MS = 60_000;
const MAX_TICKETS = 1024;

export class ReportLibrary {
  readonly #dir: string | undefined;
  readonly #tickets = new Map<string, { name: string; expires: number }>();
  readonly #now: () => number;

  /** `dir` undefined: no reports (the list is empty). */
  constructor(dir: string | undefined, now: () => number = Date.now) {
    this.#dir = dir;
    this.#now = now;
  }

  /** The report file of a folder name, if it is a regular file (symlinks are not followed). */
  async #file(name: string): Promise<{ path: string; bytes: number; mtime: Date } | undefined> {
    if (this.#dir === undefined || !NAME_RE.test(name)) return undefined;
    const path = join(this.#dir, name, 'report.html');
    try {
      const [d, f] = await Promise.all([lstat(join(this.#dir, name)), lstat(path)]);
      if (!d.isDirectory() || !f.isFile() || f.size > MAX_REPORT_BYTES) return undefined;
      return { path, bytes: f.size, mtime: f.mtime };
    } catch {
      return undefined;
    }
  }

  async list(): Promise<ReportInfo[]> {
    if (this.#dir === undefined) return [];
    let names: string[];
    try {
      names = (await readdir(this.#dir)).filter((n) => NAME_RE.test(n)).sort();
    } catch {
      return [];
    }
    const out: ReportInfo[] = [];
    for (const name of names.slice(0, 200)) {
      const f = await this.#file(name);
      if (f === undefined) continue;
      const head = (await readFile(f.path, 'utf8')).slice(0, 4096);
      const title = /<title>([^<]{0,200})<\/title>/i.exec(head)?.[1]?.trim() ?? '';
      out.push({ name, title, modifiedAt: f.mtime.toISOString(), bytes: f.bytes });
    }
    return out;
  }

  /** A single-use ticket for `name`; `STORAGE_NOT_FOUND` for no such report. */
  async ticket(name: string): Promise<{ ticket: string; expiresAt: string }> {
    if ((await this.#file(name)) === undefined)
      throw new MemwardenError('STORAGE_NOT_FOUND', 'no such report', { details: { name } });
    const now = this.#now();
    for (const [t, v] of this.#tickets) if (v.expires <= now) this.#tickets.delete(t);
    // Bounded: the oldest outstanding ticket goes first.
    while (this.#tickets.size >= MAX_TICKETS) {
      const first = this.#tickets.keys().next().value;
      if (first === undefined) break;
      this.#tickets.delete(first);
    }
    const ticket = randomBytes(24).toString('base64url');
    const expires = now + TICKET_TTL_MS;
    this.#tickets.set(ticket, { name, expires });
    return { ticket, expiresAt: new Date(expires).toISOString() };
  }

  /** Redeem a ticket (once): the report's HTML, or undefined for an unknown/expired ticket. */
  async redeem(ticket: string): Promise<string | undefined> {
    const t = this.#tickets.get(ticket);
    if (t === undefined) return undefined;
    this.#tickets.delete(ticket);
    if (t.expires <= this.#now()) return undefined;
    const f = await this.#file(t.name);
    if (f === undefined) return undefined;
    return readFile(f.path, 'utf8');
  }
}
