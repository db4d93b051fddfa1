// Addresses and CIDR ranges as variables name them (TRUST_PROXY, EXOTEL_ALLOWED_CIDRS).
import { isIP } from 'node:net';

/** Whether `entry` is an IPv4 or IPv6 address, or one with a `/prefix` its family allows. */
export function isAddressOrCidr(entry: string): boolean {
  const [address = '', prefix, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}
