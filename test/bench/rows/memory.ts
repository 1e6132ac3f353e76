// Resident memory of the whole idle `serve` tree (API, workers, embedded Temporal), summed over its process group.
import { fmt, groupRss, type BenchRow } from '../harness';

const row: BenchRow = {
  name: 'idle memory',
  order: 0,
  async measure(ctx) {
    const { bytes, processes } = groupRss(ctx.stack.svc.child.pid!);
    return { rss: bytes, processes };
  },
  report: (m) => [{ what: `Memory, whole idle \`serve\` tree (${m.processes} processes)`, product: fmt.mb(m.rss!), peer: '', ratio: '' }],
};

export const rows = [row];
