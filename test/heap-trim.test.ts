// glibc keeps the memory a burst freed below a block still in use; the heap trim gives it back.
// Measured in a process of its own, as the service's processes run: one malloc arena.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const HEAP_TRIM = path.join(__dirname, '../lib/heap-trim.js');

/** RSS (MB) of a process that fills 80 MB in 2 KB buffers, frees 15 of each 16, and runs the trim at `intervalMs`. */
async function fragmentedProcess(intervalMs: number): Promise<{ full: number; freed: number; after: number }> {
  const script = `
    const rss = () => process.memoryUsage.rss() / 2 ** 20;
    const kept = [];
    let all = [];
    for (let i = 0; i < 40000; i++) { const b = Buffer.allocUnsafeSlow(2048); b.fill(1); all.push(b); if (i % 16 === 0) kept.push(b); }
    const full = rss();
    all = null; gc(); gc();
    const freed = rss();
    require(${JSON.stringify(HEAP_TRIM)}).startHeapTrim(${intervalMs});
    setTimeout(() => { console.log(JSON.stringify({ full, freed, after: rss(), kept: kept.length })); }, 1000);
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '-e', script], { env: { ...process.env, MALLOC_ARENA_MAX: '1' } });
  return JSON.parse(stdout) as { full: number; freed: number; after: number };
}

describe('heap trim', function () {
  if (process.platform !== 'linux') return;

  it('gives back the free memory glibc keeps after the buffers are collected', async () => {
    const without = await fragmentedProcess(0);
    // what the trim is for: collected, 75 MB freed, and the process is still as large
    assert.ok(without.freed > without.full - 10 && without.after > without.full - 10, `without the trim: ${JSON.stringify(without)}`);
    const withTrim = await fragmentedProcess(100);
    assert.ok(withTrim.after < withTrim.freed - 50, `with the trim every 100 ms: ${JSON.stringify(withTrim)}`);
  });

  it('without its FFI package, says so once and the process runs on', async () => {
    // as on a platform without koffi's prebuilt binary: loading the package fails
    const script = `
      const Module = require('node:module');
      const resolve = Module._resolveFilename;
      Module._resolveFilename = function (request, ...rest) {
        if (request === 'koffi') throw new Error('no prebuilt binary for this platform');
        return resolve.call(this, request, ...rest);
      };
      const trim = require(${JSON.stringify(HEAP_TRIM)}).startHeapTrim(50);
      setTimeout(() => { trim.stop(); console.log('still running'); }, 500);
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { env: { ...process.env, LOG_LEVEL: 'info' } });
    assert.equal(stdout.split('\n').filter((l) => l.includes('malloc_trim is not available')).length, 1, stdout);
    assert.match(stdout, /still running/);
  });
});
