// The caller-ID pool: the campaign's `from` numbers, rotated call by call, preferring numbers of the
// contact's own country (a local number is answered more often, and some countries require one).
import { normalizePhone } from './phone.js';

export class CallerIdPool {
  private readonly byCountry = new Map<string, string[]>();
  private readonly turns = new Map<string, number>();

  constructor(private readonly numbers: readonly string[]) {
    for (const number of numbers) {
      const phone = normalizePhone(number);
      const country = phone.ok ? phone.country : null;
      if (country === null) continue;
      this.byCountry.set(country, [...(this.byCountry.get(country) ?? []), number]);
    }
  }

  /** The next number for a contact in `country`; null when the pool is empty (the carrier's default). */
  pick(country: string | null): string | null {
    const local = country === null ? undefined : this.byCountry.get(country);
    const candidates = local ?? this.numbers;
    if (candidates.length === 0) return null;
    const key = local ? (country as string) : '*';
    const turn = this.turns.get(key) ?? 0;
    this.turns.set(key, turn + 1);
    return candidates[turn % candidates.length]!;
  }
}
