/**
 * @module console/views/log
 * Log status: the latest signed checkpoint, its Ed25519 signature checked here under the log's
 * verifier key, and its consistency with the previous checkpoint this browser verified
 * (RFC 9162 consistency proof, recomputed here). The previous checkpoint and the key are
 * remembered in localStorage, as a log monitor would: a server that rewrote its history or
 * swapped its key since your last visit fails here, whatever it says about itself.
 */
import { type Checkpoint, api } from '../api.js';
import { badge, facts, h, mount } from '../dom.js';
import { errorBox, loading, title, when } from '../ui.js';
import {
  type Check,
  type SeenCheckpoint,
  checkConsistency,
  ed25519Supported,
  parseVerifierKey,
  toHex,
  verifyCheckpointNote,
  fromBase64,
  bytesEqual,
} from '../verify.js';

const PIN = 'memwarden.vkeyPin';
const seenKey = (vkey: string): string => `memwarden.seenCheckpoint.${vkey}`;

/**
 * The server's verifier key, checked against the one pinned in this browser (pinned on first
 * use, or set by hand from `memwarden vkey`). A different key is an error, never a silent re-pin.
 */
export async function loadVkey(): Promise<{ vkey: string; pin: string }> {
  const { vkey } = await api<{ vkey: string }>('GET', '/v1/log/vkey');
  await parseVerifierKey(vkey);
  const pinned = localStorage.getItem(PIN);
  if (pinned === null) {
    localStorage.setItem(PIN, vkey);
    return { vkey, pin: '(pinned in this browser now, on first use)' };
  }
  if (pinned !== vkey)
    throw new Error(`the server's log key ${vkey} is NOT the key pinned in this browser (${pinned}); re-pin it on the Log screen only if you know the key was rotated`);
  return { vkey, pin: '(matches the key pinned in this browser)' };
}

function readSeen(vkey: string): SeenCheckpoint | undefined {
  try {
    const raw = localStorage.getItem(seenKey(vkey));
    if (raw === null) return undefined;
    const s = JSON.parse(raw) as SeenCheckpoint;
    return typeof s.size === 'number' && typeof s.root === 'string' && typeof s.note === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

const run = async (name: string, f: () => Promise<string>): Promise<Check> => {
  try {
    return { name, ok: true, detail: await f() };
  } catch (e) {
    return { name, ok: false, detail: e instanceof Error ? e.message : String(e) };
  }
};

function pinForm(root: HTMLElement): HTMLElement {
  const input = h('input', { id: 'pin-vkey', type: 'text', size: 60, placeholder: 'output of: memwarden vkey --data DIR' });
  return h(
    'form',
    {
      class: 'toolbar',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          await parseVerifierKey(input.value.trim());
          localStorage.setItem(PIN, input.value.trim());
          await logView(root);
        } catch (err) {
          input.setCustomValidity(err instanceof Error ? err.message : 'malformed key');
          input.reportValidity();
        }
      },
    },
    h('label', { for: 'pin-vkey' }, 'Pin the log key '),
    input,
    h('button', { type: 'submit' }, 'Pin'),
  );
}

export async function logView(root: HTMLElement): Promise<void> {
  const body = h('div', {}, loading('the log status'));
  mount(root, title('Log status', 'The latest signed checkpoint of the Merkle log, and whether the log only grew since the last checkpoint this browser verified.'), body);
  try {
    if (!(await ed25519Supported())) throw new Error('this browser has no WebCrypto Ed25519: checkpoints cannot be verified here');
    const [{ vkey, pin }, cp] = await Promise.all([loadVkey(), api<Checkpoint>('GET', '/v1/log/checkpoint')]);
    const key = await parseVerifierKey(vkey);
    const previous = readSeen(vkey);
    let latestRoot: Uint8Array | undefined;
    const checks: Check[] = [];
    checks.push(
      await run('latest checkpoint signed by the log key (Ed25519)', async () => {
        const b = await verifyCheckpointNote(cp.note, key);
        if (b.size !== cp.size || !bytesEqual(b.root, fromBase64(cp.root)))
          throw new Error('the signed note is not the checkpoint the server describes');
        latestRoot = b.root;
        return `${b.origin}, size ${b.size}`;
      }),
    );
    if (previous !== undefined) {
      checks.push(
        await run(`previous checkpoint (size ${previous.size}) still verifies`, async () => {
          const b = await verifyCheckpointNote(previous.note, key);
          return `signed root ${toHex(b.root).slice(0, 16)}…`;
        }),
      );
      if (latestRoot !== undefined) {
        const root = latestRoot;
        if (previous.size > cp.size) {
          checks.push({ name: 'log size did not shrink', ok: false, detail: `was ${previous.size}, now ${cp.size}: the log was truncated or forked` });
        } else if (previous.size === cp.size) {
          checks.push({ name: `same size ${cp.size} as before`, ok: bytesEqual(fromBase64(previous.root), root), detail: bytesEqual(fromBase64(previous.root), root) ? 'same signed root' : 'different root for the same size: the log forked' });
        } else {
          try {
            const proof = await api<{ from: number; to: number; hashes: string[] }>('GET', `/v1/log/consistency?from=${previous.size}&to=${cp.size}`);
            checks.push(await checkConsistency(previous, { origin: key.name, size: cp.size, root }, proof));
          } catch (e) {
            checks.push({ name: 'consistency proof', ok: false, detail: e instanceof Error ? e.message : String(e) });
          }
        }
      }
    }
    const ok = checks.every((c) => c.ok);
    if (ok) localStorage.setItem(seenKey(vkey), JSON.stringify({ vkey, size: cp.size, root: cp.root, note: cp.note } satisfies SeenCheckpoint));
    mount(
      body,
      facts([
        ['Log', cp.origin],
        ['Verifier key', h('code', { class: 'wrap', 'data-testid': 'vkey' }, vkey)],
        ['Key pin', pin],
        ['Tree size', String(cp.size)],
        ['Root (hex)', h('code', { class: 'wrap' }, toHex(fromBase64(cp.root)))],
        ['Previous checkpoint', previous === undefined ? 'none yet: this one is now remembered, and the next visit checks the log only grew from it' : `size ${previous.size}`],
      ]),
      h(
        'section',
        { class: `checks ${ok ? 'pass' : 'fail'}`, 'data-testid': 'log-checks', 'data-result': ok ? 'pass' : 'fail', 'data-consistency': previous !== undefined && previous.size < cp.size ? 'checked' : 'none' },
        h('h3', {}, 'Checked in this browser ', badge(ok, 'CONSISTENT', 'FAILED')),
        h('ol', {}, ...checks.map((c) => h('li', { class: c.ok ? 'ok' : 'bad' }, badge(c.ok), ' ', h('strong', {}, c.name), h('div', { class: 'muted' }, c.detail)))),
      ),
      h('details', {}, h('summary', {}, 'The signed note'), h('pre', { class: 'content' }, cp.note)),
      h('p', {}, h('button', { type: 'button', id: 'refresh-log', onclick: () => void logView(root) }, 'Check again'), ' ', h('span', { class: 'muted' }, `checked ${when(new Date().toISOString())}`)),
      pinForm(root),
    );
  } catch (e) {
    mount(body, errorBox(e), pinForm(root));
  }
}
