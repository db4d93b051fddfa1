// Exotel's allowed networks (EXOTEL_ALLOWED_CIDRS, docs/security.md): Exotel signs none of its
// requests, so the address a request comes from (after TRUST_PROXY, as Fastify's `req.ip` reads it)
// is what verifies it.
import { BlockList, isIP } from 'node:net';

/** Whether an address lies in one of `entries` (addresses or CIDRs, already validated). */
export function networkMatcher(entries: readonly string[]): (address: string) => boolean {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const type = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return (address) => {
    // An IPv4 client on a dual-stack socket reads as `::ffff:a.b.c.d`.
    const plain = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
    const family = isIP(plain);
    if (family === 0) return false;
    return list.check(plain, family === 6 ? 'ipv6' : 'ipv4');
  };
}
