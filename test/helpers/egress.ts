import { startEgressProxy, type EgressProxy } from '../../engines/egress/egress-proxy';

let proxy: Promise<EgressProxy> | null = null;

/** An egress proxy for activity tests, whose fixtures live on loopback (private addresses allowed). */
export function testEgress(): Promise<EgressProxy> {
  proxy ??= startEgressProxy({ allowPrivate: true });
  return proxy;
}
